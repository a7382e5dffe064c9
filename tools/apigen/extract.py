"""Extract the facts of upstream's built-in kinds from a k8s.io/api checkout.

Reads, at one release tag, the ``types.go`` and ``generated.proto`` of each
k8s.io/api package kapi declares kinds of, and writes what the Go structs and
the proto messages say as data, to ``tools/apigen/facts/<group>_<version>.json``:
JSON names, ``omitempty``, Go types (pointer, slice, map, embedded), proto
field numbers and message names, list and map types, merge keys, ``+optional``
/ ``+required`` markers, ``+featureGate`` markers, ``+enum`` types and their
values.  Comment prose is never written: descriptions are kapi's own
(``tools/apigen/descriptions``).

Only the types reachable from :data:`ROOTS` are kept.

    python tools/apigen/extract.py [--repo DIR] [--tag kubernetes-1.33.0]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_REPO = "/work/.mirror/kubernetes+api/repo"
DEFAULT_TAG = "kubernetes-1.33.0"

#: The kinds kapi declares, by k8s.io/api package: everything they reach is extracted.
ROOTS: dict[str, tuple[str, ...]] = {
    "core/v1": (
        "Pod",
        "PodList",
        "PodTemplate",
        "PodTemplateList",
        "ReplicationController",
        "ReplicationControllerList",
        "Service",
        "ServiceList",
        "ServiceAccount",
        "ServiceAccountList",
        "Binding",
        "PersistentVolume",
        "PersistentVolumeList",
        "PersistentVolumeClaim",
        "PersistentVolumeClaimList",
        "Node",
        "NodeList",
        "ResourceQuota",
        "ResourceQuotaList",
        "LimitRange",
        "LimitRangeList",
        "ComponentStatus",
        "ComponentStatusList",
    ),
    "authentication/v1": ("TokenRequest",),
    "autoscaling/v1": (
        "Scale",
        "HorizontalPodAutoscaler",
        "HorizontalPodAutoscalerList",
    ),
    "autoscaling/v2": ("HorizontalPodAutoscaler", "HorizontalPodAutoscalerList"),
    "autoscaling/v2beta1": ("HorizontalPodAutoscaler", "HorizontalPodAutoscalerList"),
    "autoscaling/v2beta2": ("HorizontalPodAutoscaler", "HorizontalPodAutoscalerList"),
    "apps/v1": (
        "Deployment",
        "DeploymentList",
        "ReplicaSet",
        "ReplicaSetList",
        "StatefulSet",
        "StatefulSetList",
        "DaemonSet",
        "DaemonSetList",
        "ControllerRevision",
        "ControllerRevisionList",
    ),
    "apps/v1beta1": (
        "Deployment",
        "DeploymentList",
        "StatefulSet",
        "StatefulSetList",
        "ControllerRevision",
        "ControllerRevisionList",
        "DeploymentRollback",
        "Scale",
    ),
    "apps/v1beta2": (
        "Deployment",
        "DeploymentList",
        "ReplicaSet",
        "ReplicaSetList",
        "StatefulSet",
        "StatefulSetList",
        "DaemonSet",
        "DaemonSetList",
        "ControllerRevision",
        "ControllerRevisionList",
        "Scale",
    ),
    "extensions/v1beta1": (
        "Deployment",
        "DeploymentList",
        "ReplicaSet",
        "ReplicaSetList",
        "DaemonSet",
        "DaemonSetList",
        "DeploymentRollback",
        "Scale",
        "NetworkPolicy",
        "NetworkPolicyList",
    ),
    "batch/v1": ("Job", "JobList", "CronJob", "CronJobList"),
    "batch/v1beta1": ("CronJob", "CronJobList"),
    "rbac/v1": (
        "Role",
        "RoleList",
        "RoleBinding",
        "RoleBindingList",
        "ClusterRole",
        "ClusterRoleList",
        "ClusterRoleBinding",
        "ClusterRoleBindingList",
    ),
    "rbac/v1beta1": (
        "Role",
        "RoleList",
        "RoleBinding",
        "RoleBindingList",
        "ClusterRole",
        "ClusterRoleList",
        "ClusterRoleBinding",
        "ClusterRoleBindingList",
    ),
    "rbac/v1alpha1": (
        "Role",
        "RoleList",
        "RoleBinding",
        "RoleBindingList",
        "ClusterRole",
        "ClusterRoleList",
        "ClusterRoleBinding",
        "ClusterRoleBindingList",
    ),
    "storage/v1": (
        "StorageClass",
        "StorageClassList",
        "VolumeAttachment",
        "VolumeAttachmentList",
        "CSIDriver",
        "CSIDriverList",
        "CSINode",
        "CSINodeList",
        "CSIStorageCapacity",
        "CSIStorageCapacityList",
    ),
    "storage/v1beta1": (
        "StorageClass",
        "StorageClassList",
        "VolumeAttachment",
        "VolumeAttachmentList",
        "CSIDriver",
        "CSIDriverList",
        "CSINode",
        "CSINodeList",
        "CSIStorageCapacity",
        "CSIStorageCapacityList",
    ),
    "scheduling/v1": (
        "PriorityClass",
        "PriorityClassList",
    ),
    "scheduling/v1beta1": (
        "PriorityClass",
        "PriorityClassList",
    ),
    "node/v1": (
        "RuntimeClass",
        "RuntimeClassList",
    ),
    "node/v1beta1": (
        "RuntimeClass",
        "RuntimeClassList",
    ),
    "networking/v1": (
        "NetworkPolicy",
        "NetworkPolicyList",
        "IngressClass",
        "IngressClassList",
    ),
    "networking/v1beta1": (
        "IngressClass",
        "IngressClassList",
    ),
    "certificates/v1": (
        "CertificateSigningRequest",
        "CertificateSigningRequestList",
    ),
    "certificates/v1beta1": (
        "CertificateSigningRequest",
        "CertificateSigningRequestList",
    ),
    "flowcontrol/v1": (
        "FlowSchema",
        "FlowSchemaList",
        "PriorityLevelConfiguration",
        "PriorityLevelConfigurationList",
    ),
    "flowcontrol/v1beta1": (
        "FlowSchema",
        "FlowSchemaList",
        "PriorityLevelConfiguration",
        "PriorityLevelConfigurationList",
    ),
    "flowcontrol/v1beta2": (
        "FlowSchema",
        "FlowSchemaList",
        "PriorityLevelConfiguration",
        "PriorityLevelConfigurationList",
    ),
    "flowcontrol/v1beta3": (
        "FlowSchema",
        "FlowSchemaList",
        "PriorityLevelConfiguration",
        "PriorityLevelConfigurationList",
    ),
    "policy/v1beta1": (
        "PodSecurityPolicy",
        "PodSecurityPolicyList",
    ),
}

#: Packages read at another release than the rest: kinds k8s.io/api has since dropped.
TAGS = {"policy/v1beta1": "kubernetes-1.24.0"}

#: Import paths outside k8s.io/api, by the short package name the facts use.
EXTERNAL = {
    "k8s.io/apimachinery/pkg/apis/meta/v1": "meta/v1",
    "k8s.io/apimachinery/pkg/api/resource": "resource",
    "k8s.io/apimachinery/pkg/util/intstr": "intstr",
    "k8s.io/apimachinery/pkg/types": "types",
    "k8s.io/apimachinery/pkg/runtime": "runtime",
}
BASIC = {"string", "bool", "int32", "int64", "float64", "byte", "int", "uint64"}

_TYPE = re.compile(r"^type\s+(\w+)\s+(.*?)\s*$")
_FIELD = re.compile(r"^(?:(\w+)\s+)?([^\s`]+)\s*(?:`(.*)`)?\s*(?://.*)?$")
_CONST = re.compile(r"^(\w+)\s+(\w+)\s*=\s*\"([^\"]*)\"")
_TAG = re.compile(r'(\w+):"([^"]*)"')
_MARKER = re.compile(r"^//\s*\+([\w:.-]+)(?:=(.*))?$")


@dataclass
class GoField:
    go_name: str
    go_type: str
    tags: dict[str, str]
    markers: list[tuple[str, str]]
    embedded: bool


@dataclass
class GoType:
    name: str
    underlying: str  # "struct" or a Go type expression
    markers: list[tuple[str, str]]
    fields: list[GoField] = field(default_factory=list)


@dataclass
class Package:
    path: str  # "core/v1"
    imports: dict[str, str]  # alias -> short package ("core/v1", "meta/v1", ...)
    types: dict[str, GoType]
    consts: dict[str, list[str]]  # type name -> const values, in source order
    proto: dict[str, dict[str, tuple[int, str, str]]]  # message -> field -> (num, label, type)
    proto_package: str = ""


def git_show(repo: str, tag: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", repo, "show", f"{tag}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _markers(comments: list[str]) -> list[tuple[str, str]]:
    out = []
    for line in comments:
        m = _MARKER.match(line.strip())
        if m:
            out.append((m[1], (m[2] or "").strip()))
    return out


def parse_go(text: str, pkg_path: str) -> tuple[dict[str, str], dict[str, GoType], dict]:
    imports: dict[str, str] = {}
    types: dict[str, GoType] = {}
    consts: dict[str, list[str]] = {}
    lines = text.splitlines()
    comments: list[str] = []
    i = 0
    in_import = in_const = False
    current: GoType | None = None
    depth = 0
    while i < len(lines):
        raw = lines[i]
        line = raw.strip()
        i += 1
        if line.startswith("/*"):
            while "*/" not in line and i < len(lines):
                line = lines[i].strip()
                i += 1
            continue
        if in_import:
            if line == ")":
                in_import = False
                continue
            m = re.match(r'^(?:(\w+)\s+)?"([^"]+)"', line)
            if m:
                path = m[2]
                alias = m[1] or path.rsplit("/", 1)[-1]
                if path.startswith("k8s.io/api/"):
                    imports[alias] = path.removeprefix("k8s.io/api/")
                elif path in EXTERNAL:
                    imports[alias] = EXTERNAL[path]
            continue
        if line.startswith("import ("):
            in_import = True
            continue
        if line.startswith("import "):
            m = re.match(r'^import\s+(?:(\w+)\s+)?"([^"]+)"', line)
            if m and m[2] in EXTERNAL:
                imports[m[1] or m[2].rsplit("/", 1)[-1]] = EXTERNAL[m[2]]
            continue
        if current is not None:
            if line.startswith("//"):
                comments.append(line)
                continue
            if line == "}" and depth == 0:
                types[current.name] = current
                current = None
                comments = []
                continue
            if not line:
                comments = []
                continue
            m = _FIELD.match(line)
            if not m:
                raise ValueError(f"{pkg_path}: cannot parse field line {line!r}")
            name, go_type, tagtext = m[1], m[2], m[3] or ""
            tags = dict(_TAG.findall(tagtext))
            embedded = name is None
            if embedded:
                name = go_type.lstrip("*").rsplit(".", 1)[-1]
            current.fields.append(GoField(name, go_type, tags, _markers(comments), embedded))
            comments = []
            continue
        if in_const:
            if line == ")":
                in_const = False
                continue
            m = _CONST.match(line)
            if m:
                consts.setdefault(m[2], []).append(m[3])
            continue
        if line.startswith("const ("):
            in_const = True
            comments = []
            continue
        if line.startswith("const "):
            m = _CONST.match(line.removeprefix("const ").strip())
            if m:
                consts.setdefault(m[2], []).append(m[3])
            continue
        if line.startswith("//"):
            comments.append(line)
            continue
        if not line:
            comments = []
            continue
        m = _TYPE.match(line)
        if m:
            name, rest = m[1], m[2]
            if rest == "struct {":
                current = GoType(name, "struct", _markers(comments))
                depth = 0
            elif rest == "struct{}":
                types[name] = GoType(name, "struct", _markers(comments))
            else:
                types[name] = GoType(name, rest.split("//")[0].strip(), _markers(comments))
            comments = []
            continue
        comments = []
    return imports, types, consts


_PROTO_FIELD = re.compile(
    r"^(optional|repeated)?\s*([\w.]+|map<\s*[\w.]+\s*,\s*[\w.]+\s*>)\s+(\w+)\s*=\s*(\d+);"
)


def parse_proto(text: str) -> tuple[str, dict[str, dict[str, tuple[int, str, str]]]]:
    package = ""
    messages: dict[str, dict[str, tuple[int, str, str]]] = {}
    current: dict[str, tuple[int, str, str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("package "):
            package = line.removeprefix("package ").rstrip(";").strip()
        elif line.startswith("message ") and line.endswith("{"):
            current = messages.setdefault(line.split()[1], {})
        elif line == "}":
            current = None
        elif current is not None and not line.startswith("//"):
            m = _PROTO_FIELD.match(line)
            if m:
                kind = m[2]
                if kind.startswith("map<"):
                    label, type_ = "map", re.sub(r"\s+", "", kind[4:-1]).split(",")[1]
                else:
                    label, type_ = m[1] or "optional", kind
                current[m[3]] = (int(m[4]), label, type_)
    return package, messages


def load_package(repo: str, tag: str, path: str) -> Package:
    imports, types, consts = parse_go(git_show(repo, tag, f"{path}/types.go"), path)
    proto_package, proto = parse_proto(git_show(repo, tag, f"{path}/generated.proto"))
    return Package(path, imports, types, consts, proto, proto_package)


# --- Go type expressions --------------------------------------------------------------------


def split_type(expr: str) -> tuple[str, str]:
    """The outermost constructor of a Go type expression: ("ptr"|"slice"|"map"|"named", rest)."""
    if expr.startswith("*"):
        return "ptr", expr[1:]
    if expr.startswith("[]"):
        return "slice", expr[2:]
    if expr.startswith("map["):
        return "map", expr
    return "named", expr


def map_parts(expr: str) -> tuple[str, str]:
    depth = 0
    for i, c in enumerate(expr):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return expr[4:i], expr[i + 1 :]
    raise ValueError(expr)


def qualify(expr: str, pkg: Package) -> str:
    """``expr`` with each named type qualified by its package: ``core/v1.PodSpec``."""
    kind, rest = split_type(expr)
    if kind == "ptr":
        return "*" + qualify(rest, pkg)
    if kind == "slice":
        return "[]" + qualify(rest, pkg)
    if kind == "map":
        key, value = map_parts(rest)
        return f"map[{qualify(key, pkg)}]{qualify(value, pkg)}"
    if rest in BASIC:
        return rest
    if "." in rest:
        alias, name = rest.split(".", 1)
        if alias not in pkg.imports:
            raise ValueError(f"{pkg.path}: unknown package {alias} in {expr}")
        return f"{pkg.imports[alias]}.{name}"
    return f"{pkg.path}.{rest}"


def named_types(expr: str) -> list[str]:
    kind, rest = split_type(expr)
    if kind in ("ptr", "slice"):
        return named_types(rest)
    if kind == "map":
        key, value = map_parts(rest)
        return named_types(key) + named_types(value)
    return [] if rest in BASIC else [rest]


# --- facts ----------------------------------------------------------------------------------


def _marker_values(markers: list[tuple[str, str]], key: str) -> list[str]:
    return [v for k, v in markers if k == key]


def _has(markers: list[tuple[str, str]], *keys: str) -> bool:
    return any(k in keys for k, _ in markers)


def field_facts(f: GoField, pkg: Package, message: dict[str, tuple[int, str, str]]) -> dict:
    json_tag = f.tags.get("json", "")
    json_name, _, options = json_tag.partition(",")
    out: dict = {"go": f.go_name}
    if f.embedded and json_name == "" and "inline" in options.split(","):
        out["inline"] = True
    out["json"] = json_name
    out["omitempty"] = "omitempty" in options.split(",")
    out["type"] = qualify(f.go_type, pkg)
    if "protobuf" in f.tags:
        parts = f.tags["protobuf"].split(",")
        proto_name = next((p[5:] for p in parts if p.startswith("name=")), "")
        number = int(parts[1])
        proto = {"number": number, "name": proto_name}
        if not proto_name:
            proto_name = next((n for n, v in message.items() if v[0] == number), "")
            proto["name"] = proto_name
        if proto_name in message:
            pnum, label, ptype = message[proto_name]
            if pnum != number:
                raise ValueError(f"{pkg.path}.{f.go_name}: proto number {pnum} != tag {number}")
            proto["label"] = label
            proto["type"] = ptype.removeprefix(".")
        out["proto"] = proto
    if _has(f.markers, "optional", "k8s:optional"):
        out["optional"] = True
    if _has(f.markers, "required", "k8s:required"):
        out["required"] = True
    list_type = _marker_values(f.markers, "listType")
    if list_type:
        out["listType"] = list_type[0]
    keys = _marker_values(f.markers, "listMapKey")
    if keys:
        out["listMapKeys"] = keys
    map_type = _marker_values(f.markers, "mapType")
    if map_type:
        out["mapType"] = map_type[0]
    strategy = f.tags.get("patchStrategy") or next(
        iter(_marker_values(f.markers, "patchStrategy")), None
    )
    if strategy:
        out["patchStrategy"] = strategy
    merge_key = f.tags.get("patchMergeKey") or next(
        iter(_marker_values(f.markers, "patchMergeKey")), None
    )
    if merge_key:
        out["patchMergeKey"] = merge_key
    gates = _marker_values(f.markers, "featureGate")
    if gates:
        out["featureGates"] = sorted({g for v in gates for g in v.split(",") if g})
    return out


def extract(repo: str, tag: str) -> dict[str, dict]:
    packages: dict[str, Package] = {}

    def package(path: str) -> Package:
        if path not in packages:
            packages[path] = load_package(repo, TAGS.get(path, tag), path)
        return packages[path]

    wanted: dict[str, set[str]] = {}
    queue = [f"{path}.{name}" for path, names in ROOTS.items() for name in names]
    while queue:
        qualified = queue.pop()
        path, name = qualified.rsplit(".", 1)
        if path in EXTERNAL.values() or path in wanted.get(path, set()):
            continue
        if name in wanted.setdefault(path, set()):
            continue
        wanted[path].add(name)
        pkg = package(path)
        gotype = pkg.types.get(name)
        if gotype is None:
            raise ValueError(f"{path}: no type {name}")
        if gotype.underlying == "struct":
            for f in gotype.fields:
                queue.extend(named_types(qualify(f.go_type, pkg)))
        else:
            queue.extend(named_types(qualify(gotype.underlying, pkg)))

    out: dict[str, dict] = {}
    for path in sorted(wanted):
        pkg = packages[path]
        types: dict[str, dict] = {}
        for name in sorted(wanted[path]):
            gotype = pkg.types[name]
            facts: dict = {}
            if gotype.underlying == "struct":
                facts["kind"] = "struct"
                if name in pkg.proto:
                    facts["proto"] = f"{pkg.proto_package}.{name}"
                struct_type = _marker_values(gotype.markers, "structType")
                if struct_type:
                    facts["structType"] = struct_type[0]
                message = pkg.proto.get(name, {})
                facts["fields"] = [field_facts(f, pkg, message) for f in gotype.fields]
            else:
                facts["kind"] = "alias"
                facts["type"] = qualify(gotype.underlying, pkg)
                if _has(gotype.markers, "enum"):
                    facts["enum"] = sorted(set(pkg.consts.get(name, [])))
            types[name] = facts
        out[path] = {
            "source": {"module": "k8s.io/api", "tag": TAGS.get(path, tag), "package": path},
            "kinds": sorted(n for n in ROOTS.get(path, ()) if n in wanted[path]),
            "types": types,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=DEFAULT_REPO, help="a git clone of k8s.io/api")
    parser.add_argument("--tag", default=DEFAULT_TAG, help="the release tag to read")
    parser.add_argument("--out", default=str(HERE / "facts"), help="the facts directory")
    args = parser.parse_args(argv)
    facts = extract(args.repo, args.tag)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.json"):
        old.unlink()
    for path, data in facts.items():
        target = out / (path.replace("/", "_") + ".json")
        target.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
        print(f"wrote {target} ({len(data['types'])} types)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
