"""The built-in API kinds kapi serves, one :class:`Resource` per kind."""

from __future__ import annotations

from kapi.apis import (
    admissionregistration_v1,
    apiextensions_v1,
    apiserverinternal_v1alpha1,
    apps,
    autoscaling,
    batch,
    certificates,
    coordination_v1,
    core_v1,
    core_v1_componentstatuses,
    core_v1_endpoints,
    core_v1_events,
    core_v1_nodes,
    core_v1_persistentvolumes,
    core_v1_pods,
    core_v1_podtemplates,
    core_v1_replicationcontrollers,
    core_v1_resourcequotas,
    core_v1_serviceaccounts,
    core_v1_services,
    discovery_v1,
    events_v1,
    flowcontrol,
    networking,
    networking_policies,
    node,
    policy,
    policy_psp,
    rbac,
    scheduling,
    storage,
    storagemigration_v1beta1,
)
from kapi.features import FeatureGate
from kapi.runtime.scheme import Resource


def builtin_resources(gates: FeatureGate | None = None) -> list[Resource]:
    """Fresh resources (and strategies) for a new scheme, in group order: core, then by group.

    ``gates``: the server's feature gates (default: the modelled release's defaults).
    """
    return [
        *core_v1.resources(),
        *core_v1_componentstatuses.resources(),
        *core_v1_endpoints.resources(),
        *core_v1_events.resources(),
        *core_v1_nodes.resources(),
        *core_v1_persistentvolumes.resources(),
        *core_v1_pods.resources(),
        *core_v1_podtemplates.resources(),
        *core_v1_replicationcontrollers.resources(),
        *core_v1_resourcequotas.resources(),
        *core_v1_serviceaccounts.resources(),
        *core_v1_services.resources(),
        *admissionregistration_v1.resources(),
        *apiextensions_v1.resources(gates or FeatureGate()),
        *apiserverinternal_v1alpha1.resources(gates or FeatureGate()),
        *apps.resources(),
        *autoscaling.resources(),
        *batch.resources(),
        *certificates.resources(),
        *coordination_v1.resources(),
        *discovery_v1.resources(),
        *events_v1.resources(),
        *flowcontrol.resources(),
        *networking.resources(),
        *networking_policies.resources(),
        *node.resources(),
        *policy.resources(),
        *policy_psp.resources(),
        *rbac.resources(),
        *storage.resources(gates or FeatureGate()),
        *scheduling.resources(),
        *storagemigration_v1beta1.resources(gates or FeatureGate()),
    ]
