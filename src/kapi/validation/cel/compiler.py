"""Compilation of ``x-kubernetes-validations`` rules (upstream ``schema/cel/compilation.go``).

Each schema node with rules gets one CEL environment in which ``self`` and ``oldSelf`` have the
node's type. Scalars, lists and string-keyed maps get their CEL types; objects with declared
properties are ``map(string, dyn)`` (cel-expr-python can declare message types only from
protobuf descriptors), so the field checks cel-go's type checker does on objects are done here
on the syntax tree instead: selecting a property the schema does not declare is a compile error
in cel-go's wording and position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from cel_expr_python import cel

from kapi.apimachinery import field_errors
from kapi.apimachinery.field_errors import FieldError, GoSyntax, Path
from kapi.apimachinery.gotext import go_quote
from kapi.validation.cel import checked, cost, library, strformat
from kapi.validation.structural import rule_errors

T = cel.Type
_MAP_DYN = T.Map(T.STRING, T.DYN)

SELF = "self"
OLD_SELF = "oldSelf"
#: Hidden variable holding ``[old]`` or ``[]`` for rules with ``optionalOldSelf``.
OLD_SELF_LIST = "__kapiOldSelf"

# cel-expr-python cannot declare a variable of optional type (the binding turns it into an
# opaque type), so an optionalOldSelf rule is compiled inside a binding that builds the optional.
_OPTIONAL_WRAPPER: Final = (
    f"cel.bind({OLD_SELF}, size({OLD_SELF_LIST}) == 0 ? optional.none() : "
    f"optional.of({OLD_SELF_LIST}[0]), ({{}}))"
)
_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r" \[[A-Z_]+\]$")


def cel_type(s: dict[str, Any]) -> Any:
    """The CEL type of values of a structural schema node (upstream ``SchemaDeclType``)."""
    if s.get("x-kubernetes-int-or-string"):
        return T.DYN
    if s.get("x-kubernetes-preserve-unknown-fields") and not s.get("properties"):
        return T.DYN
    t = s.get("type")
    if t == "integer":
        return T.INT
    if t == "boolean":
        return T.BOOL
    if t == "string":
        return T.STRING
    if t == "array":
        items = s.get("items")
        return T.List(cel_type(items) if isinstance(items, dict) else T.DYN)
    if t == "object":
        ap = s.get("additionalProperties")
        if isinstance(ap, dict) and not s.get("properties"):
            return T.Map(T.STRING, cel_type(ap))
        return _MAP_DYN
    return T.DYN  # numbers: JSON integers and floats both occur


@lru_cache(maxsize=1)
def _declarations() -> list[Any]:
    return library.declarations()


@lru_cache(maxsize=1)
def _config() -> Any:
    return cel.NewEnvConfigFromYaml(library.ENV_CONFIG_YAML)


def _env(self_type: Any, old_self: tuple[str, Any]) -> Any:
    """An environment with ``self`` and one old-value variable (name, type)."""
    return cel.NewEnv(
        config=_config(),
        variables={SELF: self_type, old_self[0]: old_self[1]},
        functions=_declarations(),
    )


def _runtime_program(env: Any, program: Any, expr: checked.CheckedExpr) -> Any:
    """The program to evaluate: ``program`` itself unless ``expr`` (the checked rule) calls
    functions that the bindings cannot implement as declared (``library.RUNTIME_REWRITES``);
    then ``program`` with those calls redirected."""
    rewrites = library.RUNTIME_REWRITES
    if not any(o in rewrites for ids in expr.overloads.values() for o in ids):
        return program
    rewritten = checked.rewrite_calls(program.serialize(), rewrites)
    return program if rewritten is None else env.deserialize(rewritten)


def _issues(err: Exception) -> str:
    """cel-go's ``Issues.String()`` from cel-cpp's status text (same format, status stripped)."""
    return _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", str(err)))


#: Where the rule starts in its optionalOldSelf wrapper (on the wrapper's first line).
_WRAPPED_AT: Final = _OPTIONAL_WRAPPER.index("({})") + 1
_ISSUE_AT = re.compile(r"^ERROR: <input>:(\d+):(\d+): ")


def _as_written(issues: str, text: str) -> str:
    """Errors of a rule compiled inside the optionalOldSelf wrapper, as cel-go reports
    them for the rule as written: columns of its first line and the quoted source line
    are the rule's own (cel-go declares ``oldSelf`` optional instead of wrapping)."""
    lines = text.split("\n")
    out: list[str] = []
    at: tuple[int, int] | None = None
    for line in issues.split("\n"):
        m = _ISSUE_AT.match(line)
        if m:
            row, col = int(m.group(1)), int(m.group(2))
            if row == 1 and col > _WRAPPED_AT:
                col -= _WRAPPED_AT
                line = f"ERROR: <input>:1:{col}: " + line[m.end() :]
            at = (row, col) if row <= len(lines) else None
        elif at is not None and line.startswith(" | ") and not line.strip(" |.^"):
            line = " | " + "." * (at[1] - 1) + "^"  # the caret under the column
            at = None
        elif at is not None and line.startswith(" | "):
            line = " | " + lines[at[0] - 1]  # the quoted source line
        out.append(line)
    return "\n".join(out)


# --- rendering the ValidationRule bad value ------------------------------------------------


# Upstream prints the address of a non-nil pointer field; any address is as (un)informative.
_POINTER_ADDRESS = "0xc000000000"


def rule_go_syntax(rule: dict[str, Any]) -> GoSyntax:
    """``%#v`` of ``apiextensions.ValidationRule`` (the internal type, field order as upstream)."""

    def ptr(go_type: str, set_: bool) -> str:
        return f"({go_type})({_POINTER_ADDRESS if set_ else 'nil'})"

    return GoSyntax(
        "apiextensions.ValidationRule{"
        f"Rule:{go_quote(rule.get('rule') or '')}, "
        f"Message:{go_quote(rule.get('message') or '')}, "
        f"MessageExpression:{go_quote(rule.get('messageExpression') or '')}, "
        f"Reason:{ptr('*apiextensions.FieldValueErrorReason', rule.get('reason') is not None)}, "
        f"FieldPath:{go_quote(rule.get('fieldPath') or '')}, "
        f"OptionalOldSelf:{ptr('*bool', rule.get('optionalOldSelf') is not None)}}}"
    )


def invalid_rule(path: Path, rule: dict[str, Any], detail: str) -> FieldError:
    return field_errors.invalid(path, rule_go_syntax(rule), detail)


# --- fieldPath -----------------------------------------------------------------------------


def _unescape_single_quoted(s: str) -> str:
    escapes = {
        "a": "\a",
        "b": "\b",
        "f": "\f",
        "n": "\n",
        "r": "\r",
        "t": "\t",
        "v": "\v",
        "'": "'",
        "\\": "\\",
    }

    def repl(m: re.Match[str]) -> str:
        if m.group(1) not in escapes:
            raise ValueError(f"invalid escape char \\{m.group(1)}")
        return escapes[m.group(1)]

    return re.sub(r"\\(.)", repl, s)


_FIELD_PATH_TOKEN = re.compile(r"'(?:[^'\\]|\\.)*'|[.\[\]]|[^.\[\]']+")


def valid_field_path(json_path: str, schema: dict[str, Any]) -> str:
    """Normalize a rule's ``fieldPath`` against the schema (upstream ``ValidFieldPath``).

    Returns the path as ``field_errors.Path`` renders it; raises ValueError when the path does not
    name a declared field.
    """
    tokens = _FIELD_PATH_TOKEN.findall(json_path)
    path = ""  # rendered as field_errors.Path renders a path built from nil
    s = schema
    i = 0

    def step(name: str) -> None:
        nonlocal path, s
        props = s.get("properties")
        ap = s.get("additionalProperties")
        if isinstance(props, dict):
            if name not in props:
                raise ValueError("does not refer to a valid field")
            path, s = f"{path}.{name}" if path else name, props[name]
        elif isinstance(ap, dict):
            path, s = f"{path}[{name}]", ap
        else:
            raise ValueError("does not refer to a valid field")

    while i < len(tokens):
        tok = tokens[i]
        if tok == ".":
            if i + 1 >= len(tokens):
                raise ValueError("unexpected end of JSON path")
            step(tokens[i + 1])
            i += 2
        elif tok == "[":
            if i + 2 >= len(tokens) or tokens[i + 2] != "]":
                raise ValueError("unexpected end of JSON path")
            quoted = tokens[i + 1]
            if len(quoted) < 2 or quoted[0] != "'" or quoted[-1] != "'":
                raise ValueError(f"expected single quoted string but got {quoted}")
            step(_unescape_single_quoted(quoted[1:-1]))
            i += 3
        else:
            raise ValueError(f"expected [ or . but got: {tok}")
    return path


# --- undeclared fields ---------------------------------------------------------------------


def _closed_object(s: dict[str, Any] | None) -> bool:
    """Whether selecting an undeclared property of values of ``s`` is a type error."""
    return (
        s is not None
        and s.get("type") == "object"
        and isinstance(s.get("properties"), dict)
        and not isinstance(s.get("additionalProperties"), dict)
        and not s.get("x-kubernetes-preserve-unknown-fields")
        and not s.get("x-kubernetes-embedded-resource")
    )


def _caret(source: str, offset: int) -> tuple[str, str]:
    """cel-go's error location and source snippet for a code point offset."""
    lines = source.split("\n")
    line_no, col = 1, offset
    for line in lines:
        if col <= len(line):
            break
        col -= len(line) + 1
        line_no += 1
    text = lines[line_no - 1]
    return f"<input>:{line_no}:{col + 1}", f"\n | {text}\n | {'.' * col}^"


def _schema_of(s: Any) -> dict[str, Any] | None:
    return s if isinstance(s, dict) else None


def _iteration_schemas(
    n: checked.Node, range_schema: dict[str, Any] | None
) -> dict[str, dict[str, Any] | None]:
    """Schemas of a comprehension's variables: the element of a list, or for two-variable
    comprehensions the index and element of a list, the key and value of a map."""
    r = range_schema or {}
    t = r.get("type")
    items = _schema_of(r.get("items")) if t == "array" else None
    if not n.iter_var2:
        return {n.iter_var: items}
    value = _schema_of(r.get("additionalProperties")) if t == "object" else items
    return {n.iter_var: None, n.iter_var2: value}


def undeclared_fields(
    expr: checked.CheckedExpr, source: str, schema: dict[str, Any], is_root: bool
) -> str:
    """cel-go's ``undefined field`` errors for selections of undeclared properties."""
    root = schema
    if is_root and _closed_object(schema):
        root = dict(schema)
        root["properties"] = {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            **schema["properties"],
        }
    errors: list[str] = []

    def visit(n: checked.Node, scope: dict[str, dict[str, Any] | None]) -> dict[str, Any] | None:
        if n.kind == checked.IDENT:
            return scope.get(n.name)
        if n.kind == checked.SELECT and n.operand is not None:
            s = visit(n.operand, scope)
            if _closed_object(s):
                assert s is not None
                if n.name not in s["properties"]:
                    where, snippet = _caret(source, expr.positions.get(n.id, 0))
                    errors.append(f"ERROR: {where}: undefined field '{n.name}'{snippet}")
                    return None
                return None if n.test_only else s["properties"][n.name]
            return None
        if n.kind == checked.COMPREHENSION and n.iter_range is not None:
            r = visit(n.iter_range, scope)
            inner = dict(scope)
            inner.update(_iteration_schemas(n, r))
            inner[n.accu_var] = None
            for x in (n.accu_init, n.loop_condition, n.loop_step, n.result):
                if x is not None:
                    visit(x, inner)
            return None
        for x in ([n.operand] if n.operand else []) + n.args:
            visit(x, scope)
        return None

    visit(expr.root, {SELF: root, OLD_SELF: root})
    return "\n".join(errors)


def _selected_schema(node: checked.Node, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The schema of a plain ``self.a.b`` selection of declared properties, else None."""
    names: list[str] = []
    while node.kind == checked.SELECT and node.operand is not None and not node.test_only:
        names.append(node.name)
        node = node.operand
    if not names or node.kind != checked.IDENT or node.name != SELF:
        return None
    selected = schema
    for name in reversed(names):
        if not _closed_object(selected) or name not in selected["properties"]:
            return None
        selected = selected["properties"][name]
    return selected


def _return_type(program: Any, expr: checked.CheckedExpr, schema: dict[str, Any]) -> Any:
    """The checker's result type, or the declared type of a plain ``self.a.b`` selection.

    Objects are declared to cel-expr-python as ``map(string, dyn)``, so the
    checker types ``self.replicas`` as ``dyn`` where upstream, which declares
    every property, knows it is an ``int`` and rejects it as a rule or
    messageExpression result.  The property's schema gives that type back
    for the common shape of a bare selection; other expressions stay ``dyn``.
    """
    found = program.return_type()
    if found != T.DYN:
        return found
    selected = _selected_schema(expr.root, schema)
    return found if selected is None else cel_type(selected)


# cel-go's type names of the schema types upstream would declare (numbers stay dyn here).
_SCHEMA_TYPE_NAMES = {
    "integer": "int",
    "string": "string",
    "boolean": "bool",
    "array": "list",
    "object": "map",
}


def _format_errors(expr: checked.CheckedExpr, source: str, schema: dict[str, Any]) -> str:
    """cel-go's compile-time errors for ``format`` calls, as ``Issues.String()`` prints them."""

    def type_of(node: checked.Node) -> str:
        found = expr.types.get(node.id, "dyn")
        if found != "dyn":
            return found
        selected = _selected_schema(node, schema)
        if selected is None or cel_type(selected) == T.DYN:
            return found
        return _SCHEMA_TYPE_NAMES.get(selected.get("type", ""), found)

    located = [
        (expr.positions.get(node_id, 0), message)
        for node_id, message in strformat.format_call_errors(expr, type_of)
    ]
    lines = []
    for offset, message in sorted(located, key=lambda om: om[0]):
        where, snippet = _caret(source, offset)
        lines.append(f"ERROR: {where}: {message}{snippet}")
    return "\n".join(lines)


# --- compiled rules ------------------------------------------------------------------------


@dataclass(slots=True)
class CompiledRule:
    rule: dict[str, Any]
    schema: dict[str, Any]
    program: Any
    ast: checked.CheckedExpr
    uses_old_self: bool
    optional_old_self: bool
    message_program: Any | None
    message_ast: checked.CheckedExpr | None
    field_path: str  # normalized, "" when none

    @property
    def error_string(self) -> str:
        """Upstream ``ruleErrorString``: the message if any, else the rule."""
        msg = (self.rule.get("message") or "").strip()
        return msg or (self.rule.get("rule") or "").strip()


@dataclass(slots=True)
class NodeRules:
    """The rules of one schema node and what compilation found about them."""

    compiled: list[CompiledRule]
    errors: list[FieldError]
    max_cost: list[tuple[Path, int]]  # (path of rule/messageExpression, cost x cardinality)

    def record_cost(self, path: Path, what: str, estimated: int) -> None:
        """Keep an expression's estimated cost, with an error when it is over the limit."""
        limit = cost.STATIC_ESTIMATED_COST_LIMIT
        if estimated > limit:
            self.errors.append(
                field_errors.forbidden(path, cost_error_message(what, estimated, limit))
            )
        self.max_cost.append((path, estimated))


def _schema_checks(
    i: int, rule: dict[str, Any], base: Path, schema: dict[str, Any]
) -> list[FieldError]:
    """The per-rule checks upstream does before compiling (ValidateCustomResourceDefinition)."""
    p = base.index(i)
    errs = rule_errors(rule, p)
    fp = rule.get("fieldPath") or ""
    if fp:
        try:
            valid_field_path(fp, schema)
        except ValueError:
            errs.append(
                field_errors.invalid(p.child("fieldPath"), fp, "fieldPath must be a valid path")
            )
    return errs


class _CompileError(Exception):
    """Why an expression does not compile, as cel-go's ``Issues.String()`` prints it."""


def _compile(
    env: Any, text: str, schema: dict[str, Any], is_root: bool
) -> tuple[Any, checked.CheckedExpr]:
    """Parse and check ``text`` as cel-go's ``Env.Compile`` does for Kubernetes: the checker's
    errors, then those of the checks kapi does on the syntax tree (undeclared fields, which
    cel-go's checker finds, and cel-go's ``format`` validator)."""
    try:
        program = env.compile(text)
    except RuntimeError as e:
        raise _CompileError(_issues(e)) from None
    ast = checked.decode(program.serialize())
    problems = undeclared_fields(ast, text, schema, is_root) or _format_errors(ast, text, schema)
    if problems:
        raise _CompileError(problems)
    return program, ast


def compile_node(
    schema: dict[str, Any], path: Path, cardinality: int | None, is_root: bool
) -> NodeRules:
    """Compile the rules of one schema node; ``cardinality`` None means unbounded."""
    rules = schema.get("x-kubernetes-validations") or []
    base = path.child("x-kubernetes-validations")
    errs: list[FieldError] = []
    for i, rule in enumerate(rules):
        errs.extend(_schema_checks(i, rule, base, schema))
    out = NodeRules([], errs, [])
    if errs:  # upstream skips CEL compilation when the rules themselves are malformed
        return out
    self_type = cel_type(schema)
    env = _env(self_type, (OLD_SELF, self_type))
    # optionalOldSelf rules are checked with oldSelf as dyn, so that errors point into the rule
    # as written, then compiled for evaluation inside the optional wrapper.
    optional_check_env: Any = None
    optional_env: Any = None
    factor = cardinality if cardinality is not None else cost.max_cardinality(schema)
    for i, rule in enumerate(rules):
        p = base.index(i)
        text: str = rule["rule"]
        optional = bool(rule.get("optionalOldSelf"))
        if optional:
            optional_check_env = optional_check_env or _env(self_type, (OLD_SELF, T.DYN))
        check_env = optional_check_env if optional else env
        try:
            program, ast = _compile(check_env, text, schema, is_root)
        except _CompileError as e:
            errs.append(invalid_rule(p.child("rule"), rule, f"compilation failed: {e}"))
            continue
        if _return_type(program, ast, schema) not in (T.BOOL, T.DYN):
            errs.append(
                invalid_rule(p.child("rule"), rule, "cel expression must evaluate to a bool")
            )
            continue
        uses_old_self = any(
            n.kind == checked.IDENT and n.name == OLD_SELF for n in checked.walk(ast.root)
        )
        if optional and uses_old_self:
            optional_env = optional_env or _env(self_type, (OLD_SELF_LIST, T.List(self_type)))
            check_env = optional_env
            try:
                program = optional_env.compile(_OPTIONAL_WRAPPER.format(text))
            except RuntimeError as e:
                issues = _as_written(_issues(e), text)
                errs.append(invalid_rule(p.child("rule"), rule, "compilation failed: " + issues))
                continue
        program = _runtime_program(check_env, program, ast)
        out.record_cost(
            p.child("rule"), "estimated rule cost", _static_cost(ast, schema, is_root) * factor
        )
        message_program, message_ast = None, None
        mexpr = rule.get("messageExpression") or ""
        if mexpr:
            try:
                message_program, message_ast = _compile(env, mexpr, schema, is_root)
            except _CompileError as e:
                errs.append(
                    invalid_rule(
                        p.child("messageExpression"),
                        rule,
                        f"messageExpression compilation failed: {e}",
                    )
                )
                continue
            if _return_type(message_program, message_ast, schema) not in (T.STRING, T.DYN):
                errs.append(
                    invalid_rule(
                        p.child("messageExpression"),
                        rule,
                        "messageExpression must evaluate to a string",
                    )
                )
                continue
            message_program = _runtime_program(env, message_program, message_ast)
            out.record_cost(
                p.child("messageExpression"),
                "estimated messageExpression cost",
                _static_cost(message_ast, schema, is_root) * factor,
            )
        if not uses_old_self and rule.get("optionalOldSelf") is not None:
            errs.append(
                field_errors.invalid(
                    p.child("optionalOldSelf"),
                    rule["optionalOldSelf"],
                    "may not be set if oldSelf is not used in rule",
                )
            )
        fp = rule.get("fieldPath") or ""
        out.compiled.append(
            CompiledRule(
                rule=rule,
                schema=schema,
                program=program,
                ast=ast,
                uses_old_self=uses_old_self,
                optional_old_self=optional and uses_old_self,
                message_program=message_program,
                message_ast=message_ast,
                field_path=valid_field_path(fp, schema) if fp else "",
            )
        )
    return out


def _static_cost(ast: checked.CheckedExpr, schema: dict[str, Any], is_root: bool) -> int:
    resource = is_root or bool(schema.get("x-kubernetes-embedded-resource"))
    return cost.CostEstimator(
        ast, schema, cost.static_size, cost.UNKNOWN_SIZE, resource_root=resource
    ).estimate()


def cost_error_message(name: str, actual: int, limit: int) -> str:
    """Upstream ``getCostErrorMessage``."""
    factor = actual / limit
    if factor > 100.0:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{factor:.1f}x"
    return (
        f"{name} exceeds budget by factor of {text} (try simplifying the rule, or adding "
        "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
