"""OpenAPI v3 structural-schema validation, shared by custom and built-in resources.

One engine serves every kind: a schema is compiled once into a validator;
pruning and defaulting follow the same structural schema; CEL rules
(``x-kubernetes-validations``) are compiled once per schema beside it.
"""
