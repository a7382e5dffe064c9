"""rbac.authorization.k8s.io: Role, RoleBinding, ClusterRole, ClusterRoleBinding.

``v1`` is the hub and storage version.  ``v1beta1`` (1.6 to 1.22, deprecated in
1.17, per its prerelease-lifecycle tags in ``k8s.io/api``) has the same fields,
so it is the hub renamed.  ``v1alpha1`` is declared (its bindings' subjects
carry ``apiVersion`` instead of ``apiGroup`` and convert) but not served:
upstream never served an alpha version unless ``--runtime-config`` enabled it,
which kapi does not have, and it carries no lifecycle tags.

Schemas are generated (:mod:`kapi.apis.generated`); defaulting, validation,
strategies and printer columns are in :mod:`kapi.apis.rbac_validation`, the
bootstrap policy in :mod:`kapi.apis.rbac_bootstrap`.  kapi serves and
validates these objects; it does not authorize requests with them.
"""

from __future__ import annotations

from collections.abc import Callable

from kapi.apimachinery.unstructured import Object
from kapi.apis.generated import rbac_v1, rbac_v1alpha1, rbac_v1beta1
from kapi.apis.rbac_validation import (
    CLUSTER_ROLE_BINDING_COLUMNS,
    GROUP,
    ROLE_BINDING_COLUMNS,
    ClusterRoleBindingStrategy,
    ClusterRoleStrategy,
    RoleBindingStrategy,
    RoleStrategy,
    alpha_binding_to_hub,
    default_alpha_binding,
    default_binding,
    hub_binding_to_alpha,
)
from kapi.registry.strategy import Strategy
from kapi.runtime.columns import Column
from kapi.runtime.schema import Struct
from kapi.runtime.scheme import (
    GroupVersionKind,
    Lifecycle,
    Resource,
    ResourceVersion,
    renamed_version,
)
from kapi.version import Version

HUB = "v1"


def _beta_lifecycle(kind: str) -> Lifecycle:
    return Lifecycle(
        introduced=Version(1, 6),
        deprecated=Version(1, 17),
        removed=Version(1, 22),
        replacement=GroupVersionKind(GROUP, HUB, kind),
    )


def _resource(
    kind: str,
    plural: str,
    namespaced: bool,
    strategy: Strategy,
    schemas: tuple[Struct, Struct, Struct],
    *,
    binding: bool,
    columns: tuple[Column, ...] = (),
) -> Resource:
    v1, v1beta1, v1alpha1 = schemas
    defaulter: Callable[[Object], None] | None = default_binding if binding else None
    return Resource(
        group=GROUP,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=namespaced,
        versions={
            HUB: ResourceVersion(HUB, v1, Lifecycle(introduced=Version(1, 8)), defaulter),
            "v1beta1": renamed_version(
                "v1beta1",
                v1beta1,
                _beta_lifecycle(kind),
                defaulter,
            ),
            "v1alpha1": ResourceVersion(
                "v1alpha1",
                v1alpha1,
                None,
                default_alpha_binding if binding else None,
                to_hub=alpha_binding_to_hub if binding else dict,
                from_hub=hub_binding_to_alpha if binding else dict,
                served=False,
            ),
        },
        hub_version=HUB,
        storage_version=HUB,
        strategy=strategy,
        columns=columns,
    )


def resources() -> list[Resource]:
    """The four RBAC resources (fresh strategies for a new scheme)."""
    return [
        _resource(
            "ClusterRole",
            "clusterroles",
            False,
            ClusterRoleStrategy(),
            (rbac_v1.ClusterRole, rbac_v1beta1.ClusterRole, rbac_v1alpha1.ClusterRole),
            binding=False,
        ),
        _resource(
            "ClusterRoleBinding",
            "clusterrolebindings",
            False,
            ClusterRoleBindingStrategy(),
            (
                rbac_v1.ClusterRoleBinding,
                rbac_v1beta1.ClusterRoleBinding,
                rbac_v1alpha1.ClusterRoleBinding,
            ),
            binding=True,
            columns=CLUSTER_ROLE_BINDING_COLUMNS,
        ),
        _resource(
            "Role",
            "roles",
            True,
            RoleStrategy(),
            (rbac_v1.Role, rbac_v1beta1.Role, rbac_v1alpha1.Role),
            binding=False,
        ),
        _resource(
            "RoleBinding",
            "rolebindings",
            True,
            RoleBindingStrategy(),
            (rbac_v1.RoleBinding, rbac_v1beta1.RoleBinding, rbac_v1alpha1.RoleBinding),
            binding=True,
            columns=ROLE_BINDING_COLUMNS,
        ),
    ]
