"""Generate kapi's declarations of upstream's built-in kinds from the extracted facts.

Reads ``tools/apigen/facts/<group>_<version>.json`` (written by ``extract.py``)
and ``tools/apigen/descriptions/<group>.yaml`` (kapi's own field descriptions),
and writes ``src/kapi/apis/generated/<group>_<version>.py``: for every Go type
a :class:`kapi.runtime.schema.Struct` under its Go name (enums: a ``Scalar``
with their values) and its protobuf message (:mod:`kapi.runtime.protobuf_messages`)
under its UPPER_SNAKE name; top-level kinds are registered for protobuf.

    python tools/apigen/generate.py [--out DIR]

The output is formatted with ``ruff format`` and depends on nothing but the
inputs, so regenerating gives the committed files byte for byte.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FACTS = HERE / "facts"
DESCRIPTIONS = HERE / "descriptions"
OUT = ROOT / "src" / "kapi" / "apis" / "generated"

#: API group of each k8s.io/api package directory.
API_GROUPS = {
    "core": "",
    "apps": "apps",
    "extensions": "extensions",
    "batch": "batch",
    "autoscaling": "autoscaling",
    "rbac": "rbac.authorization.k8s.io",
    "policy": "policy",
    "authentication": "authentication.k8s.io",
    "storage": "storage.k8s.io",
    "scheduling": "scheduling.k8s.io",
    "node": "node.k8s.io",
    "networking": "networking.k8s.io",
    "certificates": "certificates.k8s.io",
    "flowcontrol": "flowcontrol.apiserver.k8s.io",
}

#: Types kapi declares by hand elsewhere: ``qualified Go type -> (schema, message)``, each
#: ``module:name`` (``None``: nothing to import for that side).
HAND_DECLARED: dict[str, tuple[str | None, str | None]] = {
    "meta/v1.ObjectMeta": (
        "kapi.runtime.meta:ObjectMeta",
        "kapi.runtime.protobuf_messages:OBJECT_META",
    ),
    "meta/v1.ListMeta": ("kapi.runtime.meta:ListMeta", "kapi.runtime.protobuf_messages:LIST_META"),
    "meta/v1.LabelSelector": (
        "kapi.runtime.meta:LabelSelector",
        "kapi.runtime.protobuf_messages:LABEL_SELECTOR",
    ),
    "meta/v1.Condition": (
        "kapi.runtime.meta:Condition",
        "kapi.runtime.protobuf_messages:CONDITION",
    ),
    "runtime.RawExtension": ("kapi.runtime.meta:RawExtension", None),
    "core/v1.ObjectReference": (
        "kapi.apis.core_v1_endpoints:ObjectReference",
        "kapi.runtime.protobuf_messages:OBJECT_REFERENCE",
    ),
    "core/v1.TypedLocalObjectReference": (
        "kapi.apis.networking:TypedLocalObjectReference",
        "kapi.runtime.protobuf_messages:TYPED_LOCAL_OBJECT_REFERENCE",
    ),
}

#: Value types: Go type -> (schema expression, protobuf value type expression).
VALUES: dict[str, tuple[str, str]] = {
    "string": ("s.STRING", "pb.STRING"),
    "bool": ("s.BOOLEAN", "pb.BOOL"),
    "int32": ("s.INT32", "pb.INT32"),
    "int64": ("s.INT64", "pb.INT64"),
    "float64": ('s.Scalar("number", "double")', "pb.ValueType.DOUBLE"),
    "[]byte": ("s.BYTES", "pb.BYTES"),
    "types.UID": ("s.STRING", "pb.STRING"),
    "meta/v1.Time": ("s.Time()", "pb.TIME"),
    "meta/v1.MicroTime": ("s.MicroTime()", "pb.MICRO_TIME"),
    "intstr.IntOrString": ("s.IntOrString()", "pb.INT_OR_STRING"),
    "resource.Quantity": ("s.Quantity()", "pb.QUANTITY"),
    "runtime.RawExtension": ("meta.RawExtension", "pb.ValueType.JSON"),
}


_API_VERSION_DOC = "APIVersion defines the versioned schema of this object."
_KIND_DOC = "Kind is a string value representing the REST resource."


def py_text(text: str, width: int = 60) -> str:
    """``text`` as a Python string literal, split at spaces into implicitly concatenated
    parts when long (``ruff format`` joins the parts again where they fit a line)."""
    if len(text) <= width:
        return json.dumps(text)
    parts: list[str] = []
    current = ""
    for word in text.split(" "):
        if current and len(current) + len(word) + 1 > width:
            parts.append(current + " ")
            current = word
        else:
            current = f"{current} {word}" if current else word
    parts.append(current)
    return "(" + " ".join(json.dumps(p) for p in parts) + ")"


def upper_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).upper()


def module_name(package: str) -> str:
    return package.replace("/", "_")


class Generator:
    def __init__(self, facts: dict[str, dict], descriptions: dict[str, dict]) -> None:
        self.facts = facts
        self.descriptions = descriptions
        self.missing_gates: set[str] = set()

    # --- lookups --------------------------------------------------------------------------

    def type_facts(self, qualified: str) -> dict | None:
        package, _, name = qualified.rpartition(".")
        data = self.facts.get(package)
        return None if data is None else data["types"].get(name)

    def resolve(self, expr: str) -> tuple[str, tuple[str, ...]]:
        """``expr`` with named non-struct types replaced by what they stand for; their enum."""
        if expr.startswith("*"):
            inner, enum = self.resolve(expr[1:])
            return "*" + inner, enum
        if expr.startswith("[]") and expr != "[]byte":
            inner, enum = self.resolve(expr[2:])
            return "[]" + inner, ()
        if expr.startswith("map["):
            depth = 0
            for i, c in enumerate(expr):
                if c == "[":
                    depth += 1
                elif c == "]":
                    depth -= 1
                    if depth == 0:
                        value, _ = self.resolve(expr[i + 1 :])
                        return "map[string]" + value, ()
        facts = self.type_facts(expr) if "/" in expr else None
        if facts is not None and facts["kind"] == "alias":
            inner, enum = self.resolve(facts["type"])
            return inner, tuple(facts.get("enum", ())) or enum
        return expr, ()

    def description(self, package: str, type_name: str, key: str) -> str:
        group, version = package.split("/")
        doc = self.descriptions.get(group) or {}
        for entry in (f"{version}/{type_name}", type_name):
            value = (doc.get(entry) or {}).get(key)
            if value:
                return " ".join(str(value).split())
        return ""

    # --- one module -----------------------------------------------------------------------

    def module(self, package: str) -> str:
        data = self.facts[package]
        self.package = package
        self.imports: set[str] = set()
        self.modules: set[str] = set()
        types = data["types"]
        kinds = set(data["kinds"])
        order = self.order(package, types)
        schema_lines: list[str] = []
        proto_lines: list[str] = []
        for name in order:
            facts = types[name]
            if f"{package}.{name}" in HAND_DECLARED:
                continue
            if facts["kind"] == "alias":
                if facts.get("enum"):
                    values = ", ".join(json.dumps(v) for v in facts["enum"])
                    schema_lines.append(f'{name} = s.Scalar("string", enum=({values},))')
                continue
            list_of = self.list_item(name, facts, types)
            if list_of is not None:
                schema_lines.append(f"{name} = list_struct({list_of})")
                self.imports.add("from kapi.runtime.meta import list_struct")
                continue
            schema_lines.append(self.struct(package, name, facts))
            proto_lines.append(self.message(package, name, facts))
        register: list[str] = []
        group, version = package.split("/")
        api_version = f"{API_GROUPS[group]}/{version}" if API_GROUPS[group] else version
        for kind in sorted(kinds):
            if self.list_item(kind, types[kind], types) is not None:
                continue
            if f"{kind}List" in kinds:
                register.append(f'pb.register_kind("{api_version}", "{kind}", {upper_snake(kind)})')
            else:
                register.append(f'pb.KINDS["{api_version}", "{kind}"] = {upper_snake(kind)}')
        source = data["source"]
        header = [
            f'"""``{source["module"]}/{package}`` at ``{source["tag"]}``: declarations.',
            "",
            "GENERATED by tools/apigen/generate.py from",
            f"tools/apigen/facts/{module_name(package)}.json and",
            f"tools/apigen/descriptions/{group}.yaml; do not edit: change the generator",
            "or its inputs and regenerate (tools/apigen/README.md).",
            '"""',
            "",
            "from __future__ import annotations",
            "",
        ]
        code = "\n".join(schema_lines + proto_lines + register)
        imports = sorted(i for i in self.imports if re.search(rf"\b{i.split()[-1]}\b", code))
        body = [
            *header,
            *imports,
            "",
            "# --- schemas " + "-" * 80,
            "",
            *schema_lines,
            "",
            "# --- protobuf messages " + "-" * 70,
            "",
            *proto_lines,
            "",
            *register,
            "",
        ]
        return "\n".join(body)

    def list_item(self, name: str, facts: dict, types: dict) -> str | None:
        """The item kind of a ``<Kind>List`` type, or ``None``."""
        if facts["kind"] != "struct" or not name.endswith("List") or name[:-4] not in types:
            return None
        fields = {f["json"] for f in facts["fields"] if f["json"]}
        return name[:-4] if fields == {"metadata", "items"} else None

    def order(self, package: str, types: dict) -> list[str]:
        """Types in dependency order (each after the types of its own package it uses)."""
        done: list[str] = []
        seen: set[str] = set()

        def visit(name: str) -> None:
            if name in seen:
                return
            seen.add(name)
            facts = types[name]
            deps: list[str] = []
            if facts["kind"] == "struct":
                for f in facts["fields"]:
                    deps.extend(re.findall(rf"{re.escape(package)}\.(\w+)", f["type"]))
                if self.list_item(name, facts, types) is not None:
                    deps.append(name[:-4])
            else:
                deps.extend(re.findall(rf"{re.escape(package)}\.(\w+)", facts["type"]))
            for dep in sorted(set(deps)):
                if dep in types:
                    visit(dep)
            done.append(name)

        for name in sorted(types):
            visit(name)
        return done

    def ref(self, qualified: str, proto: bool) -> str:
        """The Python expression naming a struct type (its schema or its message)."""
        hand = HAND_DECLARED.get(qualified)
        if hand is not None:
            target = hand[1] if proto else hand[0]
            if target is None:
                raise ValueError(f"no {'message' if proto else 'schema'} for {qualified}")
            module, _, attr = target.partition(":")
            if module == "kapi.runtime.protobuf_messages":
                return f"pb.{attr}"
            parent, _, leaf = module.rpartition(".")
            self.imports.add(f"from {parent} import {leaf}")
            return f"{leaf}.{attr}"
        package, _, name = qualified.rpartition(".")
        attr = upper_snake(name) if proto else name
        if package == self.package:
            return attr
        mod = module_name(package)
        self.imports.add(f"from kapi.apis.generated import {mod}")
        return f"{mod}.{attr}"

    # --- schemas --------------------------------------------------------------------------

    def schema(self, expr: str, enum: tuple[str, ...], field: dict) -> str:
        expr = expr.lstrip("*")
        if expr in VALUES:
            if expr == "runtime.RawExtension":
                self.imports.add("from kapi.runtime import meta")
            if expr == "string" and enum:
                return f's.Scalar("string", enum=({", ".join(json.dumps(v) for v in enum)},))'
            return VALUES[expr][0]
        if expr.startswith("[]"):
            item_expr, item_enum = self.resolve(expr[2:])
            items = self.schema(item_expr, item_enum, {})
            args = [items]
            if field.get("listType", "atomic") != "atomic" or field.get("listMapKeys"):
                args.append(f'list_type="{field.get("listType", "atomic")}"')
            if field.get("listMapKeys"):
                keys = ", ".join(json.dumps(k) for k in field["listMapKeys"])
                args.append(f"map_keys=({keys},)")
            if field.get("patchStrategy"):
                args.append(f'patch_strategy="{field["patchStrategy"]}"')
            if field.get("patchMergeKey"):
                args.append(f'patch_merge_key="{field["patchMergeKey"]}"')
            return f"s.List({', '.join(args)})"
        if expr.startswith("map[string]"):
            value_expr, value_enum = self.resolve(expr[len("map[string]") :])
            values = self.schema(value_expr, value_enum, {})
            if field.get("mapType"):
                return f's.Map({values}, map_type="{field["mapType"]}")'
            return f"s.Map({values})"
        facts = self.type_facts(expr)
        if expr in HAND_DECLARED or (facts is not None and facts["kind"] == "struct"):
            return self.ref(expr, proto=False)
        raise ValueError(f"{self.package}: no schema for Go type {expr}")

    def fields(self, package: str, type_name: str, facts: dict) -> list[tuple[str, str]]:
        """``(json name, Field expression)`` of a struct, embedded structs flattened."""
        out: list[tuple[str, str]] = []
        for f in facts["fields"]:
            if f.get("inline"):
                if f["type"] == "meta/v1.TypeMeta":
                    continue
                embedded = self.type_facts(f["type"])
                if embedded is None:
                    raise ValueError(f"{package}.{type_name}: cannot inline {f['type']}")
                emb_package, _, emb_name = f["type"].rpartition(".")
                for name, expr in self.fields(emb_package, emb_name, embedded):
                    out.append((name, expr))
                continue
            if not f["json"] or f["json"] == "-":
                continue
            resolved, enum = self.resolve(f["type"])
            schema = self.schema(resolved, enum, f)
            args = [json.dumps(f["json"]), schema]
            desc = self.description(package, type_name, f["json"])
            args.append(py_text(desc))
            required = f.get("required") or (not f.get("optional") and not f["omitempty"])
            if required:
                args.append("required=True")
            if f.get("patchStrategy") and not resolved.startswith("[]"):
                args.append(f'patch_strategy="{f["patchStrategy"]}"')
            gates = f.get("featureGates")
            # A field any of several gates enables (NodeStatus.runtimeHandlers) has no one
            # stage to publish; it stays untagged, as it is set by nodes, not by users.
            if gates and len(gates) == 1:
                self.imports.add("from kapi.apis.generated import gated")
                args.append(f"lifecycle=gated({json.dumps(gates[0])})")
                args.append(f"gate={json.dumps(gates[0])}")
                from kapi.features import KNOWN_FEATURES

                self.missing_gates.update(g for g in gates if g not in KNOWN_FEATURES)
            out.append((f["json"], f"s.Field({', '.join(args)})"))
        return out

    def struct(self, package: str, name: str, facts: dict) -> str:
        group, version = package.split("/")
        self.imports.add("from kapi.runtime import schema as s")
        fields = sorted(self.fields(package, name, facts), key=lambda item: item[0])
        definition = f"io.k8s.api.{group}.{version}.{name}"
        desc = py_text(self.description(package, name, "."))
        is_kind = any(f.get("inline") and f["type"] == "meta/v1.TypeMeta" for f in facts["fields"])
        if is_kind:
            gvk = f'(("{API_GROUPS[group]}", "{version}", "{name}"),)'
            if any(n == "metadata" for n, _ in fields):
                self.imports.add("from kapi.runtime.meta import kind_struct")
                rest = [expr for n, expr in fields if n != "metadata"]
                body = "".join(f"        {expr},\n" for expr in rest)
                return (
                    f'{name} = kind_struct(\n    "{definition}",\n    {gvk},\n'
                    f"    (\n{body}    ),\n    {desc},\n)\n"
                )
            type_meta = [
                ("apiVersion", f's.Field("apiVersion", s.STRING, "{_API_VERSION_DOC}")'),
                ("kind", f's.Field("kind", s.STRING, "{_KIND_DOC}")'),
            ]
            fields = sorted(fields + type_meta, key=lambda item: item[0])
            body = "".join(f"        {expr},\n" for _, expr in fields)
            return (
                f'{name} = s.Struct(\n    "{definition}",\n    (\n{body}    ),\n    {desc},\n'
                f"    gvks={gvk},\n)\n"
            )
        extra = ""
        if facts.get("structType") == "atomic":
            extra = '    map_type="atomic",\n'
        body = "".join(f"        {expr},\n" for _, expr in fields)
        if not fields:
            atomic = ', map_type="atomic"' if extra else ""
            return f'{name} = s.Struct("{definition}", (), {desc}{atomic})\n'
        return (
            f'{name} = s.Struct(\n    "{definition}",\n    (\n{body}    ),\n    {desc},\n{extra})\n'
        )

    # --- protobuf -------------------------------------------------------------------------

    def value(self, expr: str) -> str:
        expr = expr.lstrip("*")
        if expr in VALUES:
            return VALUES[expr][1]
        facts = self.type_facts(expr)
        if expr in HAND_DECLARED or (facts is not None and facts["kind"] == "struct"):
            return self.ref(expr, proto=True)
        raise ValueError(f"{self.package}: no protobuf type for Go type {expr}")

    def map_value(self, map_type: str, resolved_map: str) -> str:
        """A map's value type; a named ``[]string`` (``ExtraValue``) travels wrapped."""
        expr = map_type.split("]", 1)[1] if map_type.startswith("map[") else ""
        resolved = resolved_map[len("map[string]") :]
        if resolved == "[]string" and expr and not expr.startswith("[]"):
            package, name = expr.rsplit(".", 1)
            group, version = package.split("/")
            return f'pb.string_list("k8s.io.api.{group}.{version}.{name}")'
        return self.value(resolved)

    def message(self, package: str, name: str, facts: dict) -> str:
        self.imports.add("from kapi.runtime import protobuf_messages as pb")
        fields: list[tuple[int, str]] = []
        for f in facts["fields"]:
            proto = f.get("proto")
            if proto is None:
                continue
            number = proto["number"]
            if f.get("inline"):
                fields.append((number, f"pb.inline({number}, {self.value(f['type'])})"))
                continue
            resolved, _ = self.resolve(f["type"])
            json_name = json.dumps(f["json"])
            if resolved.startswith("[]") and resolved != "[]byte":
                call = f"pb.repeated({number}, {json_name}, {self.value(resolved[2:])})"
                if proto.get("label") not in (None, "repeated"):
                    raise ValueError(f"{package}.{name}.{f['go']}: slice is not repeated")
            elif resolved.startswith("map[string]"):
                call = f"pb.map_of({number}, {json_name}, {self.map_value(f['type'], resolved)})"
            elif resolved.startswith("*"):
                call = f"pb.pointer({number}, {json_name}, {self.value(resolved)})"
            elif f["omitempty"]:
                call = f"pb.omitempty({number}, {json_name}, {self.value(resolved)})"
            else:
                call = f"pb.required({number}, {json_name}, {self.value(resolved)})"
            fields.append((number, call))
        body = "".join(f"    {call},\n" for _, call in sorted(fields))
        return f'{upper_snake(name)} = pb.message(\n    "{facts["proto"]}",\n{body})\n'


def load_inputs(facts_dir: Path, descriptions_dir: Path) -> tuple[dict, dict]:
    facts: dict[str, dict] = {}
    for path in sorted(facts_dir.glob("*.json")):
        data = json.loads(path.read_text())
        facts[data["source"]["package"]] = data
    descriptions: dict[str, dict] = {}
    for path in sorted(descriptions_dir.glob("*.yaml")):
        descriptions[path.stem] = yaml.safe_load(path.read_text()) or {}
    return facts, descriptions


def render(
    facts_dir: Path = FACTS, descriptions_dir: Path = DESCRIPTIONS
) -> tuple[dict[str, str], set[str]]:
    """Every generated module's text (unformatted), by file name; the gates kapi lacks."""
    facts, descriptions = load_inputs(facts_dir, descriptions_dir)
    generator = Generator(facts, descriptions)
    out = {f"{module_name(p)}.py": generator.module(p) for p in sorted(facts)}
    return out, generator.missing_gates


def ruff_format(paths: list[Path]) -> None:
    config = ["--config", str(ROOT / "pyproject.toml"), "-q"]
    ruff = [sys.executable, "-m", "ruff"]
    files = [str(p) for p in paths]
    subprocess.run([*ruff, "check", *config, "--fix", "--select", "I", *files], check=True)
    subprocess.run([*ruff, "format", *config, *files], check=True)
    # ruff joins the parts of a wrapped description that fit one line but keeps their
    # parentheses: drop them.
    for path in paths:
        text = path.read_text()
        path.write_text(_LONE_STRING.sub(r"\1\2\3", text))


_LONE_STRING = re.compile(r'^(\s*)\(("(?:[^"\\\n]|\\.)*")\)(,?)$', re.MULTILINE)


INIT = '''"""Declarations generated from upstream's API definitions (tools/apigen).

Each module is one k8s.io/api package: a ``Struct`` per Go type under its Go
name and its protobuf message name under the UPPER_SNAKE name.  This package
holds what the generated modules share: :func:`gated`, the KEP-2558 lifecycle
tags of a field behind upstream ``+featureGate`` markers.
"""

from __future__ import annotations

from kapi.features import KNOWN_FEATURES, Stage, spec_at
from kapi.runtime.lifecycle import FieldLifecycle
from kapi.version import DEFAULT_VERSION


def gated(*gates: str) -> tuple[FieldLifecycle, ...]:
    """The lifecycle tags of a field guarded by ``gates``, at the release kapi models.

    A gate kapi does not know yet, or one that is GA, gives no tag; otherwise the
    tag names the release the gate first appeared in and its stage now, as
    ``kapi lint lifecycle`` checks.
    """
    tags = []
    for gate in gates:
        specs = KNOWN_FEATURES.get(gate)
        if specs is None:
            continue
        stage = spec_at(gate, DEFAULT_VERSION).stage
        if stage in (Stage.GA, Stage.PRE_ALPHA):
            continue
        first = next(spec.since for spec in specs if spec.stage is not Stage.PRE_ALPHA)
        tags.append(FieldLifecycle(f"v{first}", stage.value.lower(), gate))
    return tuple(tags)
'''


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(OUT), help="the package directory to write")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    modules, missing = render()
    for stale in out.glob("*.py"):
        if stale.name != "__init__.py" and stale.name not in modules:
            stale.unlink()
    written = []
    for name, text in modules.items():
        (out / name).write_text(text)
        written.append(out / name)
    (out / "__init__.py").write_text(INIT)
    written.append(out / "__init__.py")
    ruff_format(written)
    for gate in sorted(missing):
        print(f"feature gate not in kapi.features: {gate}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.exit(main())
