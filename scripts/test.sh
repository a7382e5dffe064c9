#!/usr/bin/env bash
# Install everything the test suite needs, then run all of it.
# Used by the README's quick start and by CI (.ci/run); extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

python -m pip install --quiet --disable-pip-version-check -e '.[test]'

# Debian's etcd-server (the etcd backend's tests start their own members) and
# etcd-client (etcdctl: tests read the keys as etcd holds them).
# kubectl ships with the machine image.
if ! command -v etcd >/dev/null 2>&1 || ! command -v etcdctl >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends etcd-server etcd-client >/dev/null
  else
    echo "warning: etcd is not installed and this user cannot apt-get install it" >&2
  fi
fi

python -m ruff check src tests benchmarks
python -m mypy
# The layer contracts in pyproject.toml: every import points down, kapi.client stands apart.
lint-imports
python -m pytest "$@"
