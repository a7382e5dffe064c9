"""What kubectl 1.27-1.33 print against kube-apiserver 1.33, for the kinds kapi serves.

Tables follow the column definitions of kubernetes' printers
(``pkg/printers/internalversion/printers.go``) and of the apiextensions
server (CRDs: ``NAME``/``CREATED AT``; custom resources: their
``additionalPrinterColumns``).  ``explain`` pages follow kubectl's OpenAPI v3
``plaintext`` template, which every release from 1.27 on uses by default
(``--output=plaintext-openapiv2`` selects the old v2 renderer, checked too); field types
are what that template makes of upstream's published schemas.  ``describe``
follows kubectl's ``pkg/describe``.

Where the releases differ, the golden says from which minor version:

- ``explain`` prints a field's ``enum:`` values (and an ``ENUM:`` block for
  a ``FIELD:``) from 1.30, and from 1.30 a ``FIELD:`` line is followed by two
  blank lines instead of one (the enum block's line ends even when empty);
- ``describe configmap`` leaves a blank line after each value from 1.31;
- ``annotate`` reports ``annotate`` in 1.27 and ``annotated`` from 1.28;
- ``kubectl version`` prints Go structs and a deprecation warning in 1.27
  (the short form became the default in 1.28), and every release warns on
  stderr when it is more than one minor version away from the server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The releases checked command by command, and those spot-checked.
FULL_VERSIONS = ["1.27", "1.29", "1.31", "1.33"]
SPOT_VERSIONS = ["1.28", "1.30", "1.32"]

#: Default ``get`` columns (kubectl asks for a Table; ``-o wide`` adds priority-1 columns).
COLUMNS: dict[str, list[str]] = {
    "configmaps": ["NAME", "DATA", "AGE"],
    "secrets": ["NAME", "TYPE", "DATA", "AGE"],
    "namespaces": ["NAME", "STATUS", "AGE"],
    "poddisruptionbudgets": [
        "NAME",
        "MIN AVAILABLE",
        "MAX UNAVAILABLE",
        "ALLOWED DISRUPTIONS",
        "AGE",
    ],
    "leases": ["NAME", "HOLDER", "AGE"],
    "events": ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
    "cronjobs": ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"],
    "customresourcedefinitions": ["NAME", "CREATED AT"],
}
WIDE_COLUMNS: dict[str, list[str]] = {
    **COLUMNS,
    "events": [
        "LAST SEEN",
        "TYPE",
        "REASON",
        "OBJECT",
        "SUBOBJECT",
        "SOURCE",
        "MESSAGE",
        "FIRST SEEN",
        "COUNT",
        "NAME",
    ],
    "cronjobs": [*COLUMNS["cronjobs"], "CONTAINERS", "IMAGES", "SELECTOR"],
}

#: An age cell: ``translateTimestampSince`` (``HumanDuration``) of a fresh object.
AGE = re.compile(r"\d+s|\d+m\d*s?")

#: ``kubectl api-resources -o wide`` rows kube-apiserver 1.33 prints for these resources.
ALL_VERBS = "create,delete,deletecollection,get,list,patch,update,watch"
API_RESOURCES_HEADER = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
API_RESOURCES_WIDE_HEADER = [*API_RESOURCES_HEADER, "VERBS", "CATEGORIES"]
API_RESOURCES: list[list[str]] = [
    ["configmaps", "cm", "v1", "true", "ConfigMap", ALL_VERBS, ""],
    ["events", "ev", "v1", "true", "Event", ALL_VERBS, ""],
    [
        "namespaces",
        "ns",
        "v1",
        "false",
        "Namespace",
        "create,delete,get,list,patch,update,watch",
        "",
    ],
    ["secrets", "", "v1", "true", "Secret", ALL_VERBS, ""],
    [
        "customresourcedefinitions",
        "crd,crds",
        "apiextensions.k8s.io/v1",
        "false",
        "CustomResourceDefinition",
        ALL_VERBS,
        "api-extensions",
    ],
    ["cronjobs", "cj", "batch/v1", "true", "CronJob", ALL_VERBS, "all"],
    ["jobs", "", "batch/v1", "true", "Job", ALL_VERBS, "all"],
    [
        "horizontalpodautoscalers",
        "hpa",
        "autoscaling/v2",
        "true",
        "HorizontalPodAutoscaler",
        ALL_VERBS,
        "all",
    ],
    ["leases", "", "coordination.k8s.io/v1", "true", "Lease", ALL_VERBS, ""],
    ["events", "ev", "events.k8s.io/v1", "true", "Event", ALL_VERBS, ""],
    ["poddisruptionbudgets", "pdb", "policy/v1", "true", "PodDisruptionBudget", ALL_VERBS, ""],
    [
        "networkpolicies",
        "netpol",
        "networking.k8s.io/v1",
        "true",
        "NetworkPolicy",
        ALL_VERBS,
        "",
    ],
    ["ingressclasses", "", "networking.k8s.io/v1", "false", "IngressClass", ALL_VERBS, ""],
]


def minor(version: str) -> int:
    return int(version.split(".")[1])


# --- explain -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExplainPage:
    """``kubectl explain <path>``: its header, ``FIELD:`` block and field lines.

    ``fields`` are the lines kubectl prints for the fields (descriptions
    aside), ``enum:`` lines included: they are dropped before 1.30.
    ``field_enum`` is the ``ENUM:`` block of a ``FIELD:`` (1.30 on).
    """

    path: str
    kind: str
    fields: tuple[str, ...]
    group: str = ""
    field: str = ""
    field_enum: tuple[str, ...] = ()

    @property
    def group_version(self) -> str:
        return f"{self.group}/v1" if self.group else "v1"

    @property
    def header(self) -> list[str]:
        group = [f"GROUP:      {self.group}"] if self.group else []
        return [*group, f"KIND:       {self.kind}", "VERSION:    v1"]

    def expected_field_block(self, version: str) -> list[str]:
        if not self.field:
            return []
        if minor(version) < 30:
            return [self.field, ""]
        if self.field_enum:
            return [self.field, "ENUM:", *(f"    {v}" for v in self.field_enum), ""]
        return [self.field, "", ""]

    def expected_fields(self, version: str) -> list[str]:
        if minor(version) >= 30:
            return list(self.fields)
        return [line for line in self.fields if not line.lstrip().startswith("enum: ")]


EXPLAIN_PAGES = [
    ExplainPage(
        "configmap",
        "ConfigMap",
        (
            "  apiVersion\t<string>",
            "  binaryData\t<map[string]string>",
            "  data\t<map[string]string>",
            "  immutable\t<boolean>",
            "  kind\t<string>",
            "  metadata\t<ObjectMeta>",
        ),
    ),
    ExplainPage(
        "secret",
        "Secret",
        (
            "  apiVersion\t<string>",
            "  data\t<map[string]string>",
            "  immutable\t<boolean>",
            "  kind\t<string>",
            "  metadata\t<ObjectMeta>",
            "  stringData\t<map[string]string>",
            "  type\t<string>",
        ),
    ),
    ExplainPage(
        "namespace.status",
        "Namespace",
        (
            "  conditions\t<[]NamespaceCondition>",
            "  phase\t<string>",
            "  enum: Active, Terminating",
        ),
        field="FIELD: status <NamespaceStatus>",
    ),
    ExplainPage(
        "namespace.status.phase",
        "Namespace",
        (),
        field="FIELD: phase <string>",
        field_enum=("Active", "Terminating"),
    ),
    ExplainPage(
        "poddisruptionbudget.spec",
        "PodDisruptionBudget",
        (
            # Upstream's IntOrString has no type (a oneOf of integer and string),
            # so the template names the referenced schema.
            "  maxUnavailable\t<IntOrString>",
            "  minAvailable\t<IntOrString>",
            "  selector\t<LabelSelector>",
            "  unhealthyPodEvictionPolicy\t<string>",
            "  enum: AlwaysAllow, IfHealthyBudget",
        ),
        group="policy",
        field="FIELD: spec <PodDisruptionBudgetSpec>",
    ),
    ExplainPage(
        "lease.spec",
        "Lease",
        (
            # MicroTime is a string with a format: the template prints its type.
            "  acquireTime\t<string>",
            "  holderIdentity\t<string>",
            "  leaseDurationSeconds\t<integer>",
            "  leaseTransitions\t<integer>",
            "  preferredHolder\t<string>",
            "  renewTime\t<string>",
            "  strategy\t<string>",
        ),
        group="coordination.k8s.io",
        field="FIELD: spec <LeaseSpec>",
    ),
]

#: A custom resource's page: the CRD's schema, published by the apiextensions server.
CRONTAB_SPEC = ExplainPage(
    "crontabs.spec",
    "CronTab",
    ("  cronSpec\t<string> -required-", "  image\t<string>", "  replicas\t<integer>"),
    group="stable.example.com",
    field="FIELD: spec <Object>",
)

#: ``--recursive`` pages: every field line, nested fields indented by two a level.
EXPLAIN_RECURSIVE = [
    ExplainPage(
        "configmap",
        "ConfigMap",
        (
            "  apiVersion\t<string>",
            "  binaryData\t<map[string]string>",
            "  data\t<map[string]string>",
            "  immutable\t<boolean>",
            "  kind\t<string>",
            "  metadata\t<ObjectMeta>",
            "    annotations\t<map[string]string>",
            "    creationTimestamp\t<string>",
            "    deletionGracePeriodSeconds\t<integer>",
            "    deletionTimestamp\t<string>",
            "    finalizers\t<[]string>",
            "    generateName\t<string>",
            "    generation\t<integer>",
            "    labels\t<map[string]string>",
            "    managedFields\t<[]ManagedFieldsEntry>",
            "      apiVersion\t<string>",
            "      fieldsType\t<string>",
            "      fieldsV1\t<FieldsV1>",
            "      manager\t<string>",
            "      operation\t<string>",
            "      subresource\t<string>",
            "      time\t<string>",
            "    name\t<string>",
            "    namespace\t<string>",
            "    ownerReferences\t<[]OwnerReference>",
            "      apiVersion\t<string> -required-",
            "      blockOwnerDeletion\t<boolean>",
            "      controller\t<boolean>",
            "      kind\t<string> -required-",
            "      name\t<string> -required-",
            "      uid\t<string> -required-",
            "    resourceVersion\t<string>",
            "    selfLink\t<string>",
            "    uid\t<string>",
        ),
    ),
    ExplainPage(
        "poddisruptionbudget.spec",
        "PodDisruptionBudget",
        (
            "  maxUnavailable\t<IntOrString>",
            "  minAvailable\t<IntOrString>",
            "  selector\t<LabelSelector>",
            "    matchExpressions\t<[]LabelSelectorRequirement>",
            "      key\t<string> -required-",
            "      operator\t<string> -required-",
            "      values\t<[]string>",
            "    matchLabels\t<map[string]string>",
            "  unhealthyPodEvictionPolicy\t<string>",
            "  enum: AlwaysAllow, IfHealthyBudget",
        ),
        group="policy",
        field="FIELD: spec <PodDisruptionBudgetSpec>",
    ),
]


#: ``--output=plaintext-openapiv2``: the pre-1.27 renderer, reading ``/openapi/v2``.  Its
#: lines other than the descriptions (indented by five) and blank lines.  In v2 every
#: reference prints as ``<Object>`` and IntOrString is the string it is in Swagger 2.
EXPLAIN_V2_PAGES: dict[str, list[str]] = {
    "configmap": [
        "KIND:     ConfigMap",
        "VERSION:  v1",
        "DESCRIPTION:",
        "FIELDS:",
        "   apiVersion\t<string>",
        "   binaryData\t<map[string]string>",
        "   data\t<map[string]string>",
        "   immutable\t<boolean>",
        "   kind\t<string>",
        "   metadata\t<Object>",
    ],
    "poddisruptionbudget.spec": [
        "KIND:     PodDisruptionBudget",
        "VERSION:  policy/v1",
        "RESOURCE: spec <Object>",
        "DESCRIPTION:",
        "FIELDS:",
        "   maxUnavailable\t<string>",
        "   minAvailable\t<string>",
        "   selector\t<Object>",
        "   unhealthyPodEvictionPolicy\t<string>",
    ],
}


# --- describe ----------------------------------------------------------------------------------


def describe_configmap(
    name: str, namespace: str, label: str, data: dict[str, str], version: str
) -> list[str]:
    """``describe configmap`` for one label, no annotations, no binary data and no events.

    Labels go through a tabwriter padded by two, so values start after the
    widest label (``Annotations:``).
    """
    lines = [
        f"Name:         {name}",
        f"Namespace:    {namespace}",
        f"Labels:       {label}",
        "Annotations:  <none>",
        "",
        "Data",
        "====",
    ]
    for key, value in sorted(data.items()):
        lines += [f"{key}:", "----", value]
        if minor(version) >= 31:
            lines.append("")
    lines += ["", "BinaryData", "====", "", "Events:  <none>"]
    return lines


def describe_namespace(name: str) -> list[str]:
    """``describe namespace`` of an active namespace without conditions, quotas or limits.

    kubectl lists the namespace's resourcequotas and limitranges, as against
    kube-apiserver, and says when there are none.
    """
    return [
        f"Name:         {name}",
        f"Labels:       kubernetes.io/metadata.name={name}",
        "Annotations:  <none>",
        "Status:       Active",
        "",
        "No resource quota.",
        "",
        "No LimitRange resource.",
    ]


# --- messages ----------------------------------------------------------------------------------


def skew_warning(client_minor: int, server_minor: int) -> list[str]:
    """kubectl's warning when client and server are more than one minor version apart."""
    if abs(client_minor - server_minor) <= 1:
        return []
    return [
        f"WARNING: version difference between client (1.{client_minor}) and server "
        f"(1.{server_minor}) exceeds the supported minor version skew of +/-1"
    ]


VERSION_DEPRECATED = (
    "WARNING: This version information is deprecated and will be replaced with the output "
    "from kubectl version --short.  Use --output=yaml|json to get the full version."
)


def annotated(version: str) -> str:
    """The verb ``kubectl annotate`` prints after the object (1.27 lacked the "d")."""
    return "annotate" if minor(version) == 27 else "annotated"


def apply_conflict(manager: str, field: str) -> list[str]:
    """kubectl's wording around the server's Conflict for a server-side apply."""
    return [
        f'error: Apply failed with 1 conflict: conflict with "{manager}" using v1: {field}',
        "Please review the fields above--they currently have other managers. Here",
        "are the ways you can resolve this warning:",
        "* If you intend to manage all of these fields, please re-run the apply",
        "  command with the `--force-conflicts` flag.",
        "* If you do not intend to manage all of the fields, please edit your",
        "  manifest to remove references to the fields that should keep their",
        "  current managers.",
        "* You may co-own fields by updating your manifest to match the existing",
        "  value; in this case, you'll become the manager if the other manager(s)",
        "  stop managing the field (remove it from their configuration).",
        "See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts",
    ]
