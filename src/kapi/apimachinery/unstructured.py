"""The one type name for an object as kapi handles it: decoded JSON, not a typed struct.

kapi keeps every object, built-in or custom, as the dicts, lists and scalars
JSON decodes to, as upstream's ``unstructured.Unstructured`` does for custom
resources.  It lives in the base layer so that the server side and the client
library name it alike without either importing the other.
"""

from __future__ import annotations

from typing import Any

#: A JSON object: a Kubernetes object as decoded, or any object within one. Some
#: modules import it under a name for its role (``JSON`` in runtime.schema, ``Schema``
#: in cel cost and cli explain: a schema held as JSON).
Object = dict[str, Any]
