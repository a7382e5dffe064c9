"""rbac.authorization.k8s.io: defaulting, validation, strategies and printer cells.

Pure functions over plain dicts, shared by every served version (v1 is the
hub; v1beta1 has the same fields; v1alpha1 names a subject's group through
``apiVersion`` and converts here).  Validation follows upstream's
``pkg/apis/rbac/validation`` rule for rule, with its messages; the strategies
follow ``pkg/registry/rbac/{role,rolebinding,clusterrole,clusterrolebinding}``:
no status, no generation, create on update allowed, unconditional updates
allowed.  kapi validates and stores RBAC objects; it does not authorize with
them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    FieldError,
    GoSyntax,
    Path,
    invalid,
    not_supported,
    required,
)
from kapi.apimachinery.gotext import go_quote, go_sharp_v_strings
from kapi.apimachinery.labels import SelectorParseError, label_selector_as_selector
from kapi.apimachinery.unstructured import Object
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column

GROUP = "rbac.authorization.k8s.io"
SERVICE_ACCOUNT, USER, GROUP_KIND = "ServiceAccount", "User", "Group"
SUBJECT_KINDS = (SERVICE_ACCOUNT, USER, GROUP_KIND)

# --- defaulting (SetDefaults_* of rbac/v1 and rbac/v1beta1) ---------------------------------


def default_subject(subject: Object) -> None:
    """An empty ``apiGroup`` is filled in for the kinds whose group is known."""
    if not subject.get("apiGroup") and subject.get("kind") in (USER, GROUP_KIND):
        subject["apiGroup"] = GROUP


def default_binding(obj: Object) -> None:
    """RoleBinding / ClusterRoleBinding: ``roleRef.apiGroup`` and each subject's group."""
    role_ref = obj.get("roleRef")
    if isinstance(role_ref, dict) and not role_ref.get("apiGroup"):
        role_ref["apiGroup"] = GROUP
    for subject in obj.get("subjects") or ():
        if isinstance(subject, dict):
            default_subject(subject)


# --- v1alpha1 subjects: ``apiVersion`` there, ``apiGroup`` in the hub ------------------------

ALPHA_VERSION = f"{GROUP}/v1alpha1"


def _group_of(api_version: str) -> str | None:
    """``schema.ParseGroupVersion``'s group, or None when the text does not parse."""
    if not api_version or api_version == "v1":
        return ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return ""
    if len(parts) == 2:
        return parts[0]
    return None


def alpha_subject_to_hub(subject: Object) -> Object:
    """v1alpha1 ``Subject`` to the hub's: the three known kinds get their fixed group."""
    out = {k: v for k, v in subject.items() if k != "apiVersion"}
    kind = subject.get("kind")
    if kind == SERVICE_ACCOUNT:
        group: str | None = ""
    elif kind in (USER, GROUP_KIND):
        group = GROUP
    else:
        group = _group_of(subject.get("apiVersion") or "")
    if group:
        out["apiGroup"] = group
    return out


def hub_subject_to_alpha(subject: Object) -> Object:
    """The hub's ``Subject`` in v1alpha1: service accounts are ``v1``, users and groups of
    the RBAC group its alpha version, anything else ``<group>/`` (a version-less group)."""
    out = {k: v for k, v in subject.items() if k != "apiGroup"}
    kind, group = subject.get("kind"), subject.get("apiGroup") or ""
    if kind == SERVICE_ACCOUNT and not group:
        out["apiVersion"] = "v1"
    elif kind in (USER, GROUP_KIND) and group == GROUP:
        out["apiVersion"] = ALPHA_VERSION
    elif group:
        out["apiVersion"] = f"{group}/"
    return out


def default_alpha_binding(obj: Object) -> None:
    """v1alpha1 defaults: ``roleRef.apiGroup``, and ``apiVersion`` of the known subject kinds."""
    role_ref = obj.get("roleRef")
    if isinstance(role_ref, dict) and not role_ref.get("apiGroup"):
        role_ref["apiGroup"] = GROUP
    for subject in obj.get("subjects") or ():
        if isinstance(subject, dict) and not subject.get("apiVersion"):
            kind = subject.get("kind")
            if kind == SERVICE_ACCOUNT:
                subject["apiVersion"] = "v1"
            elif kind in (USER, GROUP_KIND):
                subject["apiVersion"] = ALPHA_VERSION


def alpha_binding_to_hub(obj: Object) -> Object:
    out = dict(obj)
    if obj.get("subjects") is not None:
        out["subjects"] = [alpha_subject_to_hub(s) for s in obj["subjects"]]
    return out


def hub_binding_to_alpha(obj: Object) -> Object:
    out = dict(obj)
    if obj.get("subjects") is not None:
        out["subjects"] = [hub_subject_to_alpha(s) for s in obj["subjects"]]
    return out


# --- validation ------------------------------------------------------------------------------

#: Role and binding names only need to fit in one URL path segment (upstream ``ValidateRBACName``).
validate_rbac_name = validation.name_is_path_segment


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def validate_policy_rule(rule: Mapping[str, Any], namespaced: bool, path: Path) -> list[FieldError]:
    """One rule: verbs always; either resources (with API groups) or non-resource URLs."""
    errs: list[FieldError] = []
    if not rule.get("verbs"):
        errs.append(required(path.child("verbs"), "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs") or []
    if urls:
        shown = GoSyntax(go_sharp_v_strings(_strings(urls)))
        if namespaced:
            detail = "namespaced rules cannot apply to non-resource URLs"
            errs.append(invalid(path.child("nonResourceURLs"), shown, detail))
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            detail = "rules cannot apply to both regular resources and non-resource URLs"
            errs.append(invalid(path.child("nonResourceURLs"), shown, detail))
        return errs
    if not rule.get("apiGroups"):
        detail = "resource rules must supply at least one api group"
        errs.append(required(path.child("apiGroups"), detail))
    if not rule.get("resources"):
        errs.append(
            required(path.child("resources"), "resource rules must supply at least one resource")
        )
    return errs


def _validate_rules(obj: Object, namespaced: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, rule in enumerate(obj.get("rules") or ()):
        errs += validate_policy_rule(rule or {}, namespaced, Path("rules").index(i))
    return errs


def validate_role(obj: Object) -> list[FieldError]:
    """``ValidateRole`` without ObjectMeta (the store checks that)."""
    return _validate_rules(obj, namespaced=True)


def validate_cluster_role(
    obj: Object, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """``ValidateClusterRole`` without ObjectMeta: rules, then the aggregation selectors."""
    errs = _validate_rules(obj, namespaced=False)
    rule = obj.get("aggregationRule")
    if rule is None:
        return errs
    selectors_path = Path("aggregationRule", "clusterRoleSelectors")
    selectors = rule.get("clusterRoleSelectors") or []
    if not selectors:
        detail = "at least one clusterRoleSelector required if aggregationRule is non-nil"
        errs.append(required(selectors_path, detail))
    for i, selector in enumerate(selectors):
        at = selectors_path.index(i)
        errs += validation.validate_label_selector(
            selector, at, allow_invalid_label_value=allow_invalid_label_value
        )
        try:
            label_selector_as_selector(selector)
        except SelectorParseError:
            # Upstream's bad value is the nil selector the failed conversion returned.
            errs.append(invalid(at, "null", "invalid label selector."))
    return errs


def has_invalid_label_value_in_selectors(obj: Object) -> bool:
    """Whether a stored ClusterRole's selectors already hold label values no longer valid:
    updates of such a role may keep them (upstream's ratchet for this rule)."""
    rule = obj.get("aggregationRule") or {}
    return any(
        validation.validate_label_selector(selector, Path("s"))
        for selector in rule.get("clusterRoleSelectors") or ()
    )


def validate_subject(subject: Mapping[str, Any], namespaced: bool, path: Path) -> list[FieldError]:
    """``ValidateRoleBindingSubject``: a name, a known kind, and that kind's group."""
    errs: list[FieldError] = []
    name = subject.get("name") or ""
    kind = subject.get("kind") or ""
    group = subject.get("apiGroup") or ""
    if not name:
        errs.append(required(path.child("name")))
    if kind == SERVICE_ACCOUNT:
        if name:
            for msg in validation.name_is_dns_subdomain(name, False):
                errs.append(invalid(path.child("name"), name, msg))
        if group:
            errs.append(not_supported(path.child("apiGroup"), group, [""]))
        if not namespaced and not subject.get("namespace"):
            errs.append(required(path.child("namespace")))
    elif kind in (USER, GROUP_KIND):
        if group != GROUP:
            errs.append(not_supported(path.child("apiGroup"), group, [GROUP]))
    else:
        errs.append(not_supported(path.child("kind"), kind, SUBJECT_KINDS))
    return errs


def validate_binding(obj: Object, namespaced: bool) -> list[FieldError]:
    """``ValidateRoleBinding`` / ``ValidateClusterRoleBinding`` without ObjectMeta."""
    errs: list[FieldError] = []
    role_ref = obj.get("roleRef") or {}
    group = role_ref.get("apiGroup") or ""
    if group != GROUP:
        errs.append(not_supported(Path("roleRef", "apiGroup"), group, [GROUP]))
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    kind = role_ref.get("kind") or ""
    if kind not in kinds:
        errs.append(not_supported(Path("roleRef", "kind"), kind, kinds))
    name = role_ref.get("name") or ""
    if not name:
        errs.append(required(Path("roleRef", "name")))
    else:
        for msg in validate_rbac_name(name, False):
            errs.append(invalid(Path("roleRef", "name"), name, msg))
    for i, subject in enumerate(obj.get("subjects") or ()):
        errs += validate_subject(subject or {}, namespaced, Path("subjects").index(i))
    return errs


def _role_ref_go(role_ref: Mapping[str, Any]) -> GoSyntax:
    """``%#v`` of the internal ``rbac.RoleRef`` (upstream's bad value for a changed roleRef)."""
    fields = ", ".join(
        f"{go_name}:{go_quote(role_ref.get(name) or '')}"
        for go_name, name in (("APIGroup", "apiGroup"), ("Kind", "kind"), ("Name", "name"))
    )
    return GoSyntax(f"rbac.RoleRef{{{fields}}}")


def _role_ref_key(obj: Object) -> tuple[str, str, str]:
    ref = obj.get("roleRef") or {}
    return (ref.get("apiGroup") or "", ref.get("kind") or "", ref.get("name") or "")


def validate_binding_update(new: Object, old: Object, namespaced: bool) -> list[FieldError]:
    """``Validate*BindingUpdate``: the binding again, and its roleRef may not change."""
    errs = validate_binding(new, namespaced)
    if _role_ref_key(new) != _role_ref_key(old):
        errs.append(
            invalid(
                Path("roleRef"), _role_ref_go(new.get("roleRef") or {}), "cannot change roleRef"
            )
        )
    return errs


# --- strategies ------------------------------------------------------------------------------


class _RBACStrategy(Strategy):
    """What the four RBAC strategies share: a PUT of a missing object creates it."""

    allow_create_on_update = True

    @staticmethod
    def validate_name(name: str, prefix: bool) -> list[str]:
        return validate_rbac_name(name, prefix)


# Upstream's ValidateUpdate runs the create validation and then the update one, which
# runs it again: the same errors twice among the causes, once in the message.


class RoleStrategy(_RBACStrategy):
    def validate(self, obj: Object) -> list[FieldError]:
        return validate_role(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_role(new) + validate_role(new)


class ClusterRoleStrategy(_RBACStrategy):
    def validate(self, obj: Object) -> list[FieldError]:
        return validate_cluster_role(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        allow = has_invalid_label_value_in_selectors(old)
        errs = validate_cluster_role(new, allow_invalid_label_value=allow)
        return errs + errs


class RoleBindingStrategy(_RBACStrategy):
    namespaced = True

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_binding(obj, self.namespaced)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_binding(new, self.namespaced) + validate_binding_update(
            new, old, self.namespaced
        )


class ClusterRoleBindingStrategy(RoleBindingStrategy):
    namespaced = False


# --- printers (pkg/printers/internalversion) -------------------------------------------------


def subjects_strings(obj: Object) -> tuple[list[str], list[str], list[str], list[str]]:
    """Users, groups, service accounts (``namespace/name``) and others, for display."""
    users: list[str] = []
    groups: list[str] = []
    service_accounts: list[str] = []
    others: list[str] = []
    for subject in obj.get("subjects") or ():
        kind, name = subject.get("kind") or "", subject.get("name") or ""
        namespace = subject.get("namespace") or ""
        if kind == SERVICE_ACCOUNT:
            service_accounts.append(f"{namespace}/{name}")
        elif kind == USER:
            users.append(name)
        elif kind == GROUP_KIND:
            groups.append(name)
        else:
            others.append(f"{kind}/{namespace}/{name}")
    return users, groups, service_accounts, others


def role_ref_cell(obj: Object) -> str:
    ref = obj.get("roleRef") or {}
    return f"{ref.get('kind') or ''}/{ref.get('name') or ''}"


def binding_columns(what: str, role_doc: str) -> tuple[Column, ...]:
    """``NAME ROLE AGE``, and with ``-o wide`` the subjects by kind; ``what`` names the
    kind in the wide columns' descriptions as upstream's do (``roleBinding``)."""

    def joined(index: int) -> Any:
        return lambda obj: ", ".join(subjects_strings(obj)[index])

    return (
        NAME,
        Column("Role", "string", role_doc, role_ref_cell),
        AGE,
        Column("Users", "string", f"Users in the {what}", joined(0), priority=1),
        Column("Groups", "string", f"Groups in the {what}", joined(1), priority=1),
        Column(
            "ServiceAccounts", "string", f"ServiceAccounts in the {what}", joined(2), priority=1
        ),
    )


#: Upstream's column descriptions, which it takes from v1beta1's field documentation.
ROLE_BINDING_ROLE_DOC = (
    "RoleRef can reference a Role in the current namespace or a ClusterRole in the global "
    "namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."
)
CLUSTER_ROLE_BINDING_ROLE_DOC = (
    "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot "
    "be resolved, the Authorizer must return an error."
)
ROLE_BINDING_COLUMNS = binding_columns("roleBinding", ROLE_BINDING_ROLE_DOC)
CLUSTER_ROLE_BINDING_COLUMNS = binding_columns("clusterRoleBinding", CLUSTER_ROLE_BINDING_ROLE_DOC)
