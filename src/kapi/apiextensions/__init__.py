"""CustomResourceDefinitions: validating them, serving their resources, converting versions.

The counterpart of upstream's apiextensions-apiserver: a CRD is an ordinary
stored object (:mod:`kapi.apis.apiextensions_v1`); the controller in
:mod:`kapi.apiextensions.controller` accepts its names, marks it Established
and installs one store per served version (:mod:`kapi.apiextensions.crd_stores`),
which the endpoints then serve.
"""
