"""The stores that serve custom resources, installed and removed as their CRDs change.

The counterpart of the storage map of upstream's ``crdHandler``: for each
established CRD, one store of the resource (in the server's shared table of
stores, which controllers and informers use) and one per served version (each
with its version's strategy), rebuilt when the CRD changes.  The server hands
it what it needs: the scheme the resource is added to, the shared stores, a
factory of stores over its storage and admission, the webhook clients
(conversion), the feature gates and where ratcheting's figures go.
"""

from __future__ import annotations

from typing import Protocol

from kapi.apiextensions.resource import custom_resource
from kapi.apiextensions.strategy import RatchetingMetrics
from kapi.apimachinery.unstructured import Object
from kapi.apis import crd_lifecycle
from kapi.apis.crd_internal import root_schema
from kapi.features import FeatureGate
from kapi.registry.store import Store
from kapi.runtime.lifecycle_paths import TaggedPath
from kapi.runtime.scheme import Resource, Scheme
from kapi.runtime.strategy import ResourceStrategy
from kapi.webhook import WebhookClientManager


class StoreFactory(Protocol):
    """A new store of ``resource`` over the server's storage, scheme and admission.

    Upstream's ``RESTOptionsGetter``: ``version`` and ``strategy`` make the store of
    one served version of a custom resource.
    """

    def __call__(
        self,
        resource: Resource,
        *,
        version: str | None = None,
        strategy: ResourceStrategy | None = None,
        lifecycle_paths: tuple[TaggedPath, ...] | None = None,
    ) -> Store: ...


class CustomResourceStores:
    """The installed CRDs and the stores serving their resources."""

    def __init__(
        self,
        scheme: Scheme,
        stores: dict[tuple[str, str], Store],
        new_store: StoreFactory,
        webhook_clients: WebhookClientManager,
        feature_gates: FeatureGate,
        ratcheting_metrics: RatchetingMetrics,
    ) -> None:
        self._scheme = scheme
        #: Every resource's store, keyed (group, plural): shared with the server.
        self._stores = stores
        self._new_store = new_store
        self._webhook_clients = webhook_clients
        self._feature_gates = feature_gates
        self._ratcheting_metrics = ratcheting_metrics
        #: Custom resources: one store per served version, keyed (group, plural, version).
        self._version_stores: dict[tuple[str, str, str], Store] = {}
        self._crds: dict[str, Object] = {}

    def store_for(self, resource: Resource, version: str) -> Store:
        """The store serving ``version`` of ``resource`` (custom resources have one per version)."""
        return (
            self._version_stores.get((resource.group, resource.plural, version))
            or self._stores[(resource.group, resource.plural)]
        )

    def definitions(self) -> list[Object]:
        """The CRDs being served, as last installed."""
        return list(self._crds.values())

    def store(self, crd: Object) -> Store | None:
        """The store of ``crd``'s resource, or ``None`` when it is not installed."""
        installed = self._crds.get(crd["metadata"]["name"])
        if installed is None:
            return None
        names = installed["status"]["acceptedNames"]
        return self._stores.get((installed["spec"]["group"], names["plural"]))

    def store_or_new(self, crd: Object) -> Store | None:
        """The store of ``crd``'s resource, built (not served) when it is not installed.

        A server may first see a CRD when it is already being deleted (another
        server marked it): its custom resources must still be deleted.  ``None``
        when the CRD never had its names accepted, so it can have none.
        """
        installed = self.store(crd)
        if installed is not None or not (crd.get("status") or {}).get("acceptedNames"):
            return installed
        built = custom_resource(
            crd, self._webhook_clients, self._feature_gates, self._ratcheting_metrics
        )
        return self._new_store(built.resource)

    def install(self, crd: Object) -> None:
        """Serve an established CRD, replacing what an earlier version of it installed."""
        name = crd["metadata"]["name"]
        previous = self._crds.get(name)
        if (
            previous is not None
            and previous["metadata"]["resourceVersion"] == crd["metadata"]["resourceVersion"]
        ):
            return
        self.uninstall(crd)
        built = custom_resource(
            crd, self._webhook_clients, self._feature_gates, self._ratcheting_metrics
        )
        resource = built.resource
        self._scheme.add(resource)
        self._stores[(resource.group, resource.plural)] = self._new_store(resource)
        schemas = {v["name"]: root_schema(v.get("schema")) for v in crd["spec"]["versions"]}
        for version, strategy in built.strategies.items():
            self._version_stores[(resource.group, resource.plural, version)] = self._new_store(
                resource,
                version=version,
                strategy=strategy,
                lifecycle_paths=crd_lifecycle.tagged_paths(schemas.get(version)),
            )
        self._crds[name] = crd

    def uninstall(self, crd: Object) -> None:
        """Stop serving ``crd``'s resource (nothing when it is not installed)."""
        installed = self._crds.pop(crd["metadata"]["name"], None)
        if installed is None:
            return
        group, plural = installed["spec"]["group"], installed["status"]["acceptedNames"]["plural"]
        self._scheme.remove(group, plural)
        self._stores.pop((group, plural), None)
        for key in [k for k in self._version_stores if k[:2] == (group, plural)]:
            del self._version_stores[key]
