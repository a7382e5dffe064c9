"""CEL validation rules of CRD schemas (``x-kubernetes-validations``).

The Python counterpart of apiextensions-apiserver ``pkg/apiserver/schema/cel``: rules are
compiled once per schema (with upstream's CRD-validation errors and static cost limits) and
evaluated on every write of a custom resource, walking the new and old objects together so
that transition rules see ``oldSelf``. :class:`CELValidator` (``validator``) is the entry
point; ``schema_rules`` compiles a schema's rules into a tree (with ``compiler`` for each
node's rules), ``evaluation`` runs that tree on an object, ``cost`` estimates rule costs, and
``library``, ``strings``, ``strformat`` and ``checked`` supply Kubernetes' CEL library.

Why cel-expr-python (Google's cel-cpp bindings). ``benchmarks/cel_libraries.py`` measured the
three candidates side by side (this machine, one run): evaluation of
``self.replicas <= self.maxReplicas`` took 21 µs with cel-expr-python, 300 µs with
common-expression-language (Rust, most of it converting the object) and 154 µs with
cel-python; ``all()`` over 50 items 29 µs, 383 µs and 7.7 ms; a regex rule 28, 346 and
537 µs. Beyond speed, cel-expr-python is the only one with CEL's type checker and ANTLR
grammar, so compile errors are cel-go's text byte for byte
(``ERROR: <input>:1:12: Syntax error: mismatched input '<EOF>' expecting {...}``), and the
only one with typed overload declarations and the optional/strings/bindings extensions Kubernetes
builds on. It has no cost tracking (neither has the Rust binding; cel-python could be
instrumented but is 20-300x slower), so kapi accounts cost itself (see ``cost``).

What is approximated, and why:

* Objects are ``map(string, dyn)``: the bindings declare message types only from protobuf
  descriptors. Undeclared fields are still compile errors (checked on the syntax tree), but
  type errors inside objects surface at runtime, property names are not CEL-escaped
  (``foo-bar`` cannot be selected), lists with ``x-kubernetes-list-type: set/map`` compare in
  order, and ``date``/``date-time``/``duration``/``byte`` strings stay strings.
* Runtime cost is the worst case for the sizes observed in the object (see ``cost``), charged
  before evaluation, rather than cel-go's exact interpreter count.
* Kubernetes ``Quantity``/``URL``/``IP``/``CIDR``/``NamedFormat`` values are tagged maps (see
  ``library``). The bindings cannot return optionals from Python functions, so the calls of
  the ``format`` library that return them (and ``cel.@mapInsert``, which the bindings declare
  without implementing) are redirected in the checked syntax tree before evaluation. The
  strings extension is kapi's own, so that ``indexOf``/``lastIndexOf`` also take lists
  (``strings``); ``optional.unwrap`` is missing from cel-cpp.
* ``allOf`` branches carrying rules are not evaluated.
* cel-cpp (as bound) stops any evaluation after 10,000 comprehension iterations in total, with
  no option to raise it; kapi reports that as the per-call cost limit. cel-go would allow,
  e.g., ``all()`` over 10,000 items or two nested ``all()`` over 100 items each.
"""

from kapi.validation.cel.evaluation import RuleResults
from kapi.validation.cel.validator import CELValidator

__all__ = ["CELValidator", "RuleResults"]
