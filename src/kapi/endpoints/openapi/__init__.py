"""The OpenAPI documents: ``/openapi/v3`` per group version and the ``/openapi/v2`` Swagger.

``service`` serves both; ``routes`` and ``meta`` describe the operations and
the shared meta definitions they refer to; ``v2`` and ``gnostic`` derive the
Swagger 2.0 document and its protobuf form from the v3 documents.
"""
