"""``PodSecurityPolicy`` in ``policy/v1beta1`` and ``extensions/v1beta1``, as kube-apiserver 1.24.

Upstream served PodSecurityPolicies in ``extensions/v1beta1`` from 1.2 until
1.16 (deprecated in 1.11 for ``policy/v1beta1``) and in ``policy/v1beta1``
from 1.10 until 1.25 (deprecated in 1.21, with no replacement); both groups
cohabit one storage, under ``/registry/podsecuritypolicy/``, as
``policy/v1beta1`` objects.  kapi serves them only while ``--emulated-version``
does.  The versions have the same fields; converting only renames
``apiVersion``.

Defaults follow ``pkg/apis/policy/v1beta1/defaults.go`` (and the extensions
copy): ``allowPrivilegeEscalation`` is true unless set.  Validation follows
``ValidatePodSecurityPolicy`` of ``pkg/apis/policy/validation`` at 1.24: the
strategy rules, ID ranges, volumes, capabilities, privilege escalation, host
paths and flex volumes.  Not modelled: the AppArmor and seccomp annotations'
checks and the sysctl patterns.  kapi runs no PodSecurityPolicy admission: a
policy is stored and served, and never applied to pods.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kapi.apimachinery.field_errors import (
    FieldError,
    GoSyntax,
    Path,
    invalid,
    not_supported,
    required,
)
from kapi.apimachinery.unstructured import Object
from kapi.apis.generated import policy_v1beta1
from kapi.registry.strategy import Strategy
from kapi.registry.tables import NAME, Column
from kapi.runtime.protobuf_messages import register_kind
from kapi.runtime.schema import List, Map, Schema, Struct
from kapi.runtime.scheme import GroupVersionKind, Lifecycle, Resource, ResourceVersion
from kapi.version import Version

GROUP = "policy"
EXTENSIONS = "extensions"
#: The hub of extensions/v1beta1 PodSecurityPolicies: policy/v1beta1 objects.
EXTENSIONS_HUB = "__policy_v1beta1"

#: Every volume type a policy may allow (``psputil.GetAllFSTypesAsSet`` at 1.24) and ``*``.
VOLUMES = tuple(
    sorted(
        (
            "*",
            "awsElasticBlockStore",
            "azureDisk",
            "azureFile",
            "cephFS",
            "cinder",
            "configMap",
            "csi",
            "downwardAPI",
            "emptyDir",
            "ephemeral",
            "fc",
            "flexVolume",
            "flocker",
            "gcePersistentDisk",
            "gitRepo",
            "glusterfs",
            "hostPath",
            "iscsi",
            "nfs",
            "persistentVolumeClaim",
            "photonPersistentDisk",
            "portworxVolume",
            "projected",
            "quobyte",
            "rbd",
            "scaleIO",
            "secret",
            "storageos",
            "vsphereVolume",
        )
    )
)
#: Each strategy's field and its rules, sorted as upstream's ``sets.String.List()``.
RULES = (
    ("runAsUser", ("MustRunAs", "MustRunAsNonRoot", "RunAsAny")),
    ("seLinux", ("MustRunAs", "RunAsAny")),
    ("supplementalGroups", ("MustRunAs", "RunAsAny")),
    ("fsGroup", ("MustRunAs", "RunAsAny")),
)
#: runAsGroup's rules, in the order upstream lists them (not sorted there).
RUN_AS_GROUP_RULES = ("MustRunAs", "RunAsAny", "MayRunAs")
ALL_CAPABILITIES = "*"

# --- schema: the extensions/v1beta1 copy -------------------------------------------------------


def _rehome(struct: Struct, seen: dict[str, Struct], gvk: tuple[str, str, str]) -> Struct:
    """``struct`` and every policy/v1beta1 struct it reaches, named in extensions/v1beta1."""
    old_prefix, new_prefix = "io.k8s.api.policy.v1beta1.", "io.k8s.api.extensions.v1beta1."
    if not struct.name.startswith(old_prefix):
        return struct
    if struct.name in seen:
        return seen[struct.name]

    def schema_of(schema: Schema) -> Schema:
        if isinstance(schema, Struct):
            return _rehome(schema, seen, gvk)
        if isinstance(schema, List):
            return dataclasses.replace(schema, items=schema_of(schema.items))
        if isinstance(schema, Map):
            return dataclasses.replace(schema, values=schema_of(schema.values))
        return schema

    fields = tuple(dataclasses.replace(f, schema=schema_of(f.schema)) for f in struct.fields)
    out = dataclasses.replace(
        struct,
        name=new_prefix + struct.name[len(old_prefix) :],
        fields=fields,
        gvks=(gvk,) if struct.gvks else (),
    )
    seen[struct.name] = out
    return out


PodSecurityPolicyExtensions = _rehome(
    policy_v1beta1.PodSecurityPolicy, {}, (EXTENSIONS, "v1beta1", "PodSecurityPolicy")
)
# Both versions carry the same protobuf fields under the same numbers.
register_kind(f"{EXTENSIONS}/v1beta1", "PodSecurityPolicy", policy_v1beta1.POD_SECURITY_POLICY)

# --- defaults and validation ------------------------------------------------------------------


def _spec(obj: Object) -> Object:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def default_pod_security_policy(obj: Object) -> None:
    """``SetDefaults_PodSecurityPolicySpec``: as permissive as before the field existed."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    if spec.get("allowPrivilegeEscalation") is None:
        spec["allowPrivilegeEscalation"] = True


def _id_range_errors(path: Path, rng: Object) -> list[FieldError]:
    """``validateIDRanges``: both bounds non-negative, min not above max."""
    low, high = rng.get("min") or 0, rng.get("max") or 0
    errs: list[FieldError] = []
    if low < 0:
        errs.append(invalid(path.child("min"), low, "min cannot be negative"))
    if high < 0:
        errs.append(invalid(path.child("max"), high, "max cannot be negative"))
    if low > high:
        errs.append(invalid(path.child("min"), low, "min cannot be greater than max"))
    return errs


def _strategy_errors(spec: Object, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for name, rules in RULES:
        value = spec.get(name)
        options: Object = value if isinstance(value, dict) else {}
        rule = options.get("rule") or ""
        if rule not in rules:
            errs.append(not_supported(path.child(name, "rule"), rule, rules))
        if name == "seLinux":
            continue
        for i, rng in enumerate(options.get("ranges") or ()):
            errs += _id_range_errors(path.child(name, "ranges").index(i), rng)
    group = spec.get("runAsGroup")
    if isinstance(group, dict) and (group.get("rule") or "") not in RUN_AS_GROUP_RULES:
        rule_path = path.child("runAsGroup", "rule")
        errs.append(not_supported(rule_path, group.get("rule") or "", RUN_AS_GROUP_RULES))
    return errs


def _capability_errors(spec: Object) -> list[FieldError]:
    """Upstream names these fields from the root, without ``spec.``."""
    drops = spec.get("requiredDropCapabilities")
    allowed = spec.get("allowedCapabilities") or []
    errs: list[FieldError] = []
    if drops and ALL_CAPABILITIES in allowed:
        value = "[]core.Capability{" + ", ".join(f'"{c}"' for c in drops) + "}"
        errs.append(
            invalid(
                Path("requiredDropCapabilities"),
                GoSyntax(value),
                "must be empty when all capabilities are allowed by a wildcard",
            )
        )
    if drops is None:
        return errs
    for name in ("defaultAddCapabilities", "allowedCapabilities"):
        for cap in spec.get(name) or ():
            if cap in drops:
                detail = f"capability is listed in {name} and requiredDropCapabilities"
                errs.append(invalid(Path(name), cap, detail))
    return errs


def validate_pod_security_policy_spec(spec: Object) -> list[FieldError]:
    """``ValidatePodSecurityPolicySpec`` (1.24), less the sysctl patterns."""
    path = Path("spec")
    errs = _strategy_errors(spec, path)
    errs += [
        not_supported(path.child("volumes"), v, VOLUMES)
        for v in spec.get("volumes") or ()
        if v not in VOLUMES
    ]
    errs += _capability_errors(spec)
    if spec.get("defaultAllowPrivilegeEscalation") and not spec.get("allowPrivilegeEscalation"):
        errs.append(
            invalid(
                path.child("defaultAllowPrivilegeEscalation"),
                True,
                "Cannot set DefaultAllowPrivilegeEscalation to true without also setting "
                "AllowPrivilegeEscalation to true",
            )
        )
    hosts_path = path.child("allowedHostPaths")
    for i, host in enumerate(spec.get("allowedHostPaths") or ()):
        prefix = host.get("pathPrefix") or ""
        if not prefix:
            errs.append(required(hosts_path.index(i), "is required"))
            break
        if ".." in prefix.split("/"):
            errs.append(invalid(hosts_path.index(i), prefix, "must not contain '..'"))
    flex_path = path.child("allowedFlexVolumes", "allowedFlexVolumes")
    for i, flex in enumerate(spec.get("allowedFlexVolumes") or ()):
        if not flex.get("driver"):
            errs.append(required(flex_path.index(i).child("driver"), "must specify a driver"))
    return errs


class PodSecurityPolicyStrategy(Strategy):
    """Upstream ``podsecuritypolicy`` strategy: cluster-scoped, no status, no generation."""

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_pod_security_policy_spec(_spec(obj))

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_pod_security_policy_spec(_spec(new))


# --- resources --------------------------------------------------------------------------------


def _renamed(obj: Object) -> Object:
    return dict(obj)


def _rule(name: str) -> Any:
    return lambda o: (_spec(o).get(name) or {}).get("rule") or ""


COLUMNS = (
    NAME,
    Column(
        "Priv",
        "string",
        "Whether privileged pods are allowed.",
        lambda o: "true" if _spec(o).get("privileged") else "false",
    ),
    Column(
        "Caps",
        "string",
        "The capabilities pods may add.",
        lambda o: ",".join(_spec(o).get("allowedCapabilities") or ()),
    ),
    Column("SELinux", "string", "The SELinux context rule.", _rule("seLinux")),
    Column("RunAsUser", "string", "The user ID rule.", _rule("runAsUser")),
    Column("FsGroup", "string", "The fsGroup rule.", _rule("fsGroup")),
    Column("SupGroup", "string", "The supplemental groups rule.", _rule("supplementalGroups")),
    Column(
        "ReadOnlyRootFs",
        "string",
        "Whether containers must run with a read-only root filesystem.",
        lambda o: bool(_spec(o).get("readOnlyRootFilesystem")),
    ),
    Column(
        "Volumes",
        "string",
        "The volume types pods may use.",
        lambda o: ",".join(_spec(o).get("volumes") or ()),
    ),
)


def _resource(group: str, versions: dict[str, ResourceVersion], hub: str) -> Resource:
    return Resource(
        group=group,
        kind="PodSecurityPolicy",
        plural="podsecuritypolicies",
        singular="podsecuritypolicy",
        namespaced=False,
        versions=versions,
        hub_version=hub,
        storage_version=hub,
        strategy=PodSecurityPolicyStrategy(),
        short_names=("psp",),
        columns=COLUMNS,
        # Upstream's storage factory keys them by the singular, in both groups.
        storage_resource="podsecuritypolicy",
        hub_api_version=f"{GROUP}/v1beta1",
    )


def resources() -> list[Resource]:
    """policy/v1beta1 PodSecurityPolicies and the extensions/v1beta1 ones sharing storage."""
    return [
        _resource(
            GROUP,
            {
                "v1beta1": ResourceVersion(
                    "v1beta1",
                    policy_v1beta1.PodSecurityPolicy,
                    Lifecycle(
                        introduced=Version(1, 10),
                        deprecated=Version(1, 21),
                        removed=Version(1, 25),
                    ),
                    default_pod_security_policy,
                ),
            },
            "v1beta1",
        ),
        _resource(
            EXTENSIONS,
            {
                "v1beta1": ResourceVersion(
                    "v1beta1",
                    PodSecurityPolicyExtensions,
                    Lifecycle(
                        introduced=Version(1, 2),
                        deprecated=Version(1, 11),
                        removed=Version(1, 16),
                        replacement=GroupVersionKind(GROUP, "v1beta1", "PodSecurityPolicy"),
                    ),
                    default_pod_security_policy,
                    to_hub=_renamed,
                    from_hub=_renamed,
                ),
                EXTENSIONS_HUB: ResourceVersion(
                    EXTENSIONS_HUB, policy_v1beta1.PodSecurityPolicy, served=False
                ),
            },
            EXTENSIONS_HUB,
        ),
    ]
