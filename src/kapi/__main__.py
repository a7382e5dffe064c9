import sys

from kapi.cli.main import main

sys.exit(main())
