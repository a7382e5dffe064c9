"""admissionregistration.k8s.io/v1 ``MutatingWebhookConfiguration`` and
``ValidatingWebhookConfiguration``: where admission webhooks are registered.

Schema from ``k8s.io/api/admissionregistration/v1``; defaulting from upstream
``SetDefaults_*Webhook`` and validation from
``pkg/apis/admissionregistration/validation``, with the same messages, so a
configuration kube-apiserver rejects is rejected here the same way.  The
admission plugin that calls these webhooks is :mod:`kapi.admission.webhook`.

Not modelled: ``matchConditions`` are stored and shape-checked but their CEL
expressions are neither compiled nor evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    FieldError,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
)
from kapi.apimachinery.unstructured import Object
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.meta import LabelSelector, kind_struct
from kapi.runtime.schema import BYTES, INT32, STRING, Field, List, Struct
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.version import Version
from kapi.webhook import validate_webhook_service, validate_webhook_url

GROUP = "admissionregistration.k8s.io"
_P = "io.k8s.api.admissionregistration.v1"

ServiceReference = Struct(
    f"{_P}.ServiceReference",
    (
        Field("name", STRING, "The service's name.", required=True),
        Field("namespace", STRING, "The service's namespace.", required=True),
        Field("path", STRING, "An optional URL path sent in every request to the service."),
        Field("port", INT32, "The service port the webhook listens on; 443 when unset."),
    ),
    "Points at a Service that serves a webhook.",
)

WebhookClientConfig = Struct(
    f"{_P}.WebhookClientConfig",
    (
        Field("caBundle", BYTES, "PEM CA certificates that verify the webhook's certificate."),
        Field("service", ServiceReference, "The in-cluster service serving the webhook."),
        Field("url", STRING, "The webhook's https URL, when it is not a service."),
    ),
    "How the API server reaches a webhook: by url or by service, never both.",
)

RuleWithOperations = Struct(
    f"{_P}.RuleWithOperations",
    (
        Field("apiGroups", List(STRING), "API groups the rule matches; '*' is all."),
        Field("apiVersions", List(STRING), "API versions the rule matches; '*' is all."),
        Field("operations", List(STRING), "CREATE, UPDATE, DELETE, CONNECT or '*'."),
        Field(
            "resources",
            List(STRING),
            "Resources the rule matches: 'pods', 'pods/status', 'pods/*', '*' or '*/*'.",
        ),
        Field("scope", STRING, "'Cluster', 'Namespaced' or '*' (the default)."),
    ),
    "Which operations on which resources a webhook is called for.",
)

MatchCondition = Struct(
    f"{_P}.MatchCondition",
    (
        Field(
            "expression", STRING, "A CEL expression that must be true to call the webhook.", True
        ),
        Field("name", STRING, "The condition's name, unique within the webhook.", required=True),
    ),
    "A CEL filter on the requests a webhook is called for.",
)

_COMMON_WEBHOOK_FIELDS = (
    Field(
        "admissionReviewVersions",
        List(STRING),
        "AdmissionReview versions the webhook accepts, most preferred first.",
        required=True,
    ),
    Field("clientConfig", WebhookClientConfig, "How to reach the webhook.", required=True),
    Field("failurePolicy", STRING, "Fail (the default) or Ignore when the call fails."),
    Field(
        "matchConditions",
        List(
            MatchCondition,
            list_type="map",
            map_keys=("name",),
            patch_strategy="merge",
            patch_merge_key="name",
        ),
        "CEL conditions that must all hold for the webhook to be called.",
    ),
    Field("matchPolicy", STRING, "Exact or Equivalent (the default)."),
    Field("name", STRING, "The webhook's fully qualified name.", required=True),
    Field("namespaceSelector", LabelSelector, "Labels the object's namespace must have."),
    Field("objectSelector", LabelSelector, "Labels the object must have."),
    Field("rules", List(RuleWithOperations), "The operations and resources the webhook handles."),
    Field(
        "sideEffects",
        STRING,
        "None or NoneOnDryRun: whether calling the webhook changes anything elsewhere.",
        required=True,
    ),
    Field("timeoutSeconds", INT32, "How long a call may take, 1 to 30 seconds; 10 when unset."),
)

MutatingWebhook = Struct(
    f"{_P}.MutatingWebhook",
    tuple(
        sorted(
            (
                *_COMMON_WEBHOOK_FIELDS,
                Field(
                    "reinvocationPolicy",
                    STRING,
                    "Never (the default) or IfNeeded: call again after later mutations.",
                ),
            ),
            key=lambda f: f.name,
        )
    ),
    "An admission webhook that may change the object.",
)

ValidatingWebhook = Struct(
    f"{_P}.ValidatingWebhook",
    _COMMON_WEBHOOK_FIELDS,
    "An admission webhook that accepts or rejects the object.",
)


def _webhooks_field(item: Struct) -> Field:
    return Field(
        "webhooks",
        List(
            item,
            list_type="map",
            map_keys=("name",),
            patch_strategy="merge",
            patch_merge_key="name",
        ),
        "The webhooks, called in order for mutating configurations.",
    )


MutatingWebhookConfiguration = kind_struct(
    f"{_P}.MutatingWebhookConfiguration",
    ((GROUP, "v1", "MutatingWebhookConfiguration"),),
    (_webhooks_field(MutatingWebhook),),
    "Mutating admission webhooks.",
)

ValidatingWebhookConfiguration = kind_struct(
    f"{_P}.ValidatingWebhookConfiguration",
    ((GROUP, "v1", "ValidatingWebhookConfiguration"),),
    (_webhooks_field(ValidatingWebhook),),
    "Validating admission webhooks.",
)

# --- defaulting -------------------------------------------------------------------------------

#: ``SetDefaults_ValidatingWebhook`` / ``SetDefaults_MutatingWebhook`` (v1).
_WEBHOOK_DEFAULTS: dict[str, Any] = {
    "failurePolicy": "Fail",
    "matchPolicy": "Equivalent",
    "timeoutSeconds": 10,
}


def _default_webhooks(obj: Object, mutating: bool) -> None:
    for hook in obj.get("webhooks") or ():
        if not isinstance(hook, dict):
            continue
        for key, value in _WEBHOOK_DEFAULTS.items():
            hook.setdefault(key, value)
        for selector in ("namespaceSelector", "objectSelector"):
            if hook.get(selector) is None:
                hook[selector] = {}
        if mutating:
            hook.setdefault("reinvocationPolicy", "Never")
        for rule in hook.get("rules") or ():
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")
        service = (hook.get("clientConfig") or {}).get("service")
        if isinstance(service, dict):
            service.setdefault("port", 443)


def default_mutating(obj: Object) -> None:
    _default_webhooks(obj, mutating=True)


def default_validating(obj: Object) -> None:
    _default_webhooks(obj, mutating=False)


# --- validation -------------------------------------------------------------------------------

SUPPORTED_FAILURE_POLICIES = ("Fail", "Ignore")
SUPPORTED_MATCH_POLICIES = ("Equivalent", "Exact")
NO_SIDE_EFFECT_CLASSES = ("None", "NoneOnDryRun")
SUPPORTED_SIDE_EFFECT_CLASSES = ("None", "NoneOnDryRun", "Some", "Unknown")
SUPPORTED_OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
SUPPORTED_REINVOCATION_POLICIES = ("IfNeeded", "Never")
SUPPORTED_SCOPES = ("*", "Cluster", "Namespaced")
#: The AdmissionReview versions kapi can send (``AcceptedAdmissionReviewVersions``).
ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")


def _fully_qualified_name_errors(name: str, path: Path) -> list[FieldError]:
    """``IsFullyQualifiedName``: a DNS subdomain of at least three labels."""
    if not name:
        return [required(path)]
    if errs := validation.is_dns1123_subdomain(name):
        return [invalid(path, name, ",".join(errs))]
    if len(name.split(".")) < 3:
        return [
            invalid(path, name, "should be a domain with at least three segments separated by dots")
        ]
    return []


def _wildcard_list_errors(values: Sequence[Any], path: Path, what: str) -> list[FieldError]:
    """A rule's list must not be empty, and ``*`` in it must stand alone."""
    errs = [] if values else [required(path)]
    if len(values) > 1 and "*" in values:
        errs.append(invalid(path, values, f"if '*' is present, must not specify other {what}"))
    return errs


def validate_resources(resources: Sequence[str], path: Path) -> list[FieldError]:
    """Resource and ``resource/subresource`` patterns, with upstream's wildcard exclusions."""
    errs: list[FieldError] = []
    if not resources:
        errs.append(required(path))
    wildcard_subresource_of: set[str] = set()  # x/*
    wildcard_resource_for: set[str] = set()  # */x
    has_single_wildcard = has_plain_resource = False
    for i, res_sub in enumerate(resources):
        if res_sub == "":
            errs.append(required(path.index(i)))
            continue
        if res_sub == "*":
            has_single_wildcard = True
        res, slash, sub = res_sub.partition("/")
        if not slash:
            has_plain_resource = res_sub != "*"
            continue
        if res in wildcard_subresource_of:
            errs.append(
                invalid(
                    path.index(i), res_sub, f"if '{res}/*' is present, must not specify {res_sub}"
                )
            )
        if sub in wildcard_resource_for:
            errs.append(
                invalid(
                    path.index(i), res_sub, f"if '*/{sub}' is present, must not specify {res_sub}"
                )
            )
        if sub == "*":
            wildcard_subresource_of.add(res)
        if res == "*":
            wildcard_resource_for.add(sub)
    if len(resources) > 1 and "*/*" in resources:
        detail = "if '*/*' is present, must not specify other resources"
        errs.append(invalid(path, list(resources), detail))
    if has_single_wildcard and has_plain_resource:
        detail = "if '*' is present, must not specify other resources without subresources"
        errs.append(invalid(path, list(resources), detail))
    return errs


def validate_rule_with_operations(rule: Object, path: Path) -> list[FieldError]:
    """``validateRuleWithOperations``."""
    errs: list[FieldError] = []
    operations = rule.get("operations") or []
    errs += _wildcard_list_errors(operations, path.child("operations"), "operations")
    for i, operation in enumerate(operations):
        if operation not in SUPPORTED_OPERATIONS:
            errs.append(
                not_supported(path.child("operations").index(i), operation, SUPPORTED_OPERATIONS)
            )
    groups = rule.get("apiGroups") or []
    errs += _wildcard_list_errors(groups, path.child("apiGroups"), "API groups")
    versions = rule.get("apiVersions") or []
    errs += _wildcard_list_errors(versions, path.child("apiVersions"), "API versions")
    for i, version in enumerate(versions):
        if version == "":
            errs.append(required(path.child("apiVersions").index(i)))
    errs += validate_resources(rule.get("resources") or [], path.child("resources"))
    scope = rule.get("scope")
    if scope is not None and scope not in SUPPORTED_SCOPES:
        errs.append(not_supported(path.child("scope"), scope, SUPPORTED_SCOPES))
    return errs


def validate_admission_review_versions(
    versions: Sequence[str], require_recognized: bool, path: Path
) -> list[FieldError]:
    """``validateAdmissionReviewVersions``."""
    accepted = ", ".join(ACCEPTED_REVIEW_VERSIONS)
    if not versions:
        return [required(path, f"must specify one of {accepted}")]
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(invalid(path.index(i), version, "duplicate version"))
            continue
        seen.add(version)
        errs += [invalid(path.index(i), version, e) for e in validation.is_dns1035_label(version)]
    if require_recognized and not seen & set(ACCEPTED_REVIEW_VERSIONS):
        errs.append(invalid(path, list(versions), f"must include at least one of {accepted}"))
    return errs


def _validate_client_config(config: Object, path: Path) -> list[FieldError]:
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        return [required(path, "exactly one of url or service is required")]
    if url is not None:
        return validate_webhook_url(path.child("url"), url, force_https=True)
    assert service is not None  # exactly one of the two is set
    return validate_webhook_service(
        path.child("service"),
        service.get("namespace") or "",
        service.get("name") or "",
        service.get("path"),
        service.get("port"),
    )


def _validate_match_conditions(conditions: Sequence[Object], path: Path) -> list[FieldError]:
    """Names unique and qualified, expressions present (CEL is not compiled in kapi)."""
    errs: list[FieldError] = []
    if len(conditions) > 64:
        errs.append(invalid(path, len(conditions), "must not have more than 64 match conditions"))
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        name = condition.get("name") or ""
        at = path.index(i)
        if not name:
            errs.append(required(at.child("name")))
        elif name in seen:
            errs.append(duplicate(at.child("name"), name))
        else:
            errs += [invalid(at.child("name"), name, e) for e in validation.is_qualified_name(name)]
        seen.add(name)
        if not condition.get("expression"):
            errs.append(required(at.child("expression")))
    return errs


def validate_webhook(
    hook: Object, mutating: bool, require_no_side_effects: bool, path: Path
) -> list[FieldError]:
    """``validateMutatingWebhook`` / ``validateValidatingWebhook``."""
    errs = _fully_qualified_name_errors(hook.get("name") or "", path.child("name"))
    for i, rule in enumerate(hook.get("rules") or ()):
        errs += validate_rule_with_operations(rule, path.child("rules").index(i))
    failure_policy = hook.get("failurePolicy")
    if failure_policy is not None and failure_policy not in SUPPORTED_FAILURE_POLICIES:
        errs.append(
            not_supported(path.child("failurePolicy"), failure_policy, SUPPORTED_FAILURE_POLICIES)
        )
    match_policy = hook.get("matchPolicy")
    if match_policy is not None and match_policy not in SUPPORTED_MATCH_POLICIES:
        errs.append(
            not_supported(path.child("matchPolicy"), match_policy, SUPPORTED_MATCH_POLICIES)
        )
    allowed = NO_SIDE_EFFECT_CLASSES if require_no_side_effects else SUPPORTED_SIDE_EFFECT_CLASSES
    side_effects = hook.get("sideEffects")
    if side_effects is None:
        errs.append(
            required(path.child("sideEffects"), f"must specify one of {', '.join(allowed)}")
        )
    elif side_effects not in allowed:
        errs.append(not_supported(path.child("sideEffects"), side_effects, allowed))
    timeout = hook.get("timeoutSeconds")
    if timeout is not None and not 1 <= timeout <= 30:
        detail = "the timeout value must be between 1 and 30 seconds"
        errs.append(invalid(path.child("timeoutSeconds"), timeout, detail))
    for selector in ("namespaceSelector", "objectSelector"):
        errs += validation.validate_label_selector(hook.get(selector), path.child(selector))
    if mutating:
        policy = hook.get("reinvocationPolicy")
        if policy is not None and policy not in SUPPORTED_REINVOCATION_POLICIES:
            errs.append(
                not_supported(
                    path.child("reinvocationPolicy"), policy, SUPPORTED_REINVOCATION_POLICIES
                )
            )
    errs += _validate_client_config(hook.get("clientConfig") or {}, path.child("clientConfig"))
    errs += _validate_match_conditions(
        hook.get("matchConditions") or [], path.child("matchConditions")
    )
    return errs


def validate_configuration(
    obj: Object, mutating: bool, old: Object | None = None
) -> list[FieldError]:
    """A whole configuration.

    On update, as upstream, the rules a stored object already broke are not
    enforced (a configuration written by an older server stays editable):
    no-side-effects, recognised review versions and unique names are only
    required when the old object met them.
    """
    old_hooks = (old or {}).get("webhooks") or []
    require_no_side_effects = all(h.get("sideEffects") in NO_SIDE_EFFECT_CLASSES for h in old_hooks)
    require_recognized = all(
        not h.get("admissionReviewVersions")
        or set(h["admissionReviewVersions"]) & set(ACCEPTED_REVIEW_VERSIONS)
        for h in old_hooks
    )
    old_names = [h.get("name") for h in old_hooks]
    require_unique = len(old_names) == len(set(old_names))
    errs: list[FieldError] = []
    names: set[str] = set()
    base = Path("webhooks")
    for i, hook in enumerate(obj.get("webhooks") or ()):
        at = base.index(i)
        errs += validate_webhook(hook, mutating, require_no_side_effects, at)
        errs += validate_admission_review_versions(
            hook.get("admissionReviewVersions") or [],
            require_recognized,
            at.child("admissionReviewVersions"),
        )
        name = hook.get("name") or ""
        if require_unique and name:
            if name in names:
                errs.append(duplicate(at.child("name"), name))
            names.add(name)
    return errs


class WebhookConfigurationStrategy(Strategy):
    """Cluster-scoped, no status, generation kept as upstream's strategies keep it."""

    has_generation = True

    def __init__(self, mutating: bool) -> None:
        self.mutating = mutating

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_configuration(obj, self.mutating)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_configuration(new, self.mutating, old)


def _webhook_count(obj: Object) -> int:
    return len(obj.get("webhooks") or ())


_WEBHOOKS_COLUMN = Column("Webhooks", "integer", "The number of webhooks.", _webhook_count)


def _resource(kind: str, plural: str, schema: Struct, mutating: bool) -> Resource:
    defaulter = default_mutating if mutating else default_validating
    return Resource(
        group=GROUP,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=False,
        versions={
            "v1": ResourceVersion(
                "v1", schema, Lifecycle(introduced=Version(1, 16)), defaulter=defaulter
            )
        },
        hub_version="v1",
        storage_version="v1",
        strategy=WebhookConfigurationStrategy(mutating),
        categories=("api-extensions",),
        columns=(NAME, _WEBHOOKS_COLUMN, AGE),
    )


def resources() -> list[Resource]:
    """The admissionregistration.k8s.io/v1 webhook configuration kinds."""
    return [
        _resource(
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            MutatingWebhookConfiguration,
            mutating=True,
        ),
        _resource(
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            ValidatingWebhookConfiguration,
            mutating=False,
        ),
    ]
