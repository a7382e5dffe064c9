"""One kapi API server: configuration, storage, scheme, stores, controllers.

:class:`APIServer` wires the layers together; :func:`serve` runs it under
uvicorn.  Tests start it as a real process through ``kapi serve``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import signal
import socket
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn

from kapi import version as kversion
from kapi.admission.chain import AdmissionChain
from kapi.admission.default_ingress_class import DefaultIngressClass
from kapi.admission.limit_ranger import LimitRanger
from kapi.admission.namespace_lifecycle import NamespaceLifecycle, namespace_getter
from kapi.admission.priority import PriorityAdmission
from kapi.admission.webhook import (
    MutatingWebhookAdmission,
    ValidatingWebhookAdmission,
    WebhookSource,
)
from kapi.apiextensions.controller import CRDController
from kapi.apiextensions.crd_stores import CustomResourceStores
from kapi.apiextensions.preflight import CRDPreflight
from kapi.apis import builtin_resources
from kapi.apis.apiextensions_v1 import GROUP as APIEXTENSIONS
from kapi.apis.core_v1_componentstatuses import ComponentStatusReader
from kapi.apis.core_v1_serviceaccounts import (
    DEFAULT_ISSUER,
    TokenIssuer,
    TokenSigner,
    load_private_key,
    shared_signing_key,
)
from kapi.apis.core_v1_services import (
    DEFAULT_SERVICE_CLUSTER_IP_RANGE,
    DEFAULT_SERVICE_NODE_PORT_RANGE,
    ServiceAllocator,
    ServiceNetwork,
    ServiceStrategy,
)
from kapi.apis.flowcontrol_bootstrap import GROUP as FLOWCONTROL
from kapi.apis.rbac_validation import GROUP as RBAC
from kapi.apis.scheduling import GROUP as SCHEDULING
from kapi.audit import Auditor
from kapi.controllers.flowcontrol import APF_BOOTSTRAP_HOOK, DanglingConditionController
from kapi.controllers.flowcontrol import producer as apf_producer
from kapi.controllers.garbage_collector import GarbageCollector
from kapi.controllers.identity import IdentityLeaseController, IdentityLeaseGC, apiserver_id
from kapi.controllers.kubernetes_service import KubernetesServiceController, advertise_address
from kapi.controllers.namespace import NamespaceController, ensure_system_namespaces
from kapi.controllers.priority_classes import (
    PRIORITY_CLASS_BOOTSTRAP_HOOK,
    bootstrap_priority_classes,
)
from kapi.controllers.rbac import (
    RBAC_BOOTSTRAP_HOOK,
    ClusterRoleAggregationController,
    bootstrap_policy,
)
from kapi.controllers.storage_protection import claim_protection, volume_protection
from kapi.endpoints.app import APIServerApp, HandlerConfig
from kapi.endpoints.health import HealthChecks
from kapi.endpoints.metrics import APIServerMetrics
from kapi.endpoints.openapi.service import OpenAPIService
from kapi.endpoints.protocol import (
    IDLE_TIMEOUT,
    MAX_HEADER_BYTES,
    READ_HEADER_TIMEOUT,
    CoalescingHttpToolsProtocol,
    protocol_with_limits,
)
from kapi.endpoints.token import TokenSubresource
from kapi.features import FeatureGate
from kapi.registry.field_lifecycle import FieldLifecyclePolicy
from kapi.registry.informer import Informer
from kapi.registry.predicate import EVERYTHING, SelectionPredicate
from kapi.registry.store import Store
from kapi.runtime.lifecycle_paths import TaggedPath
from kapi.runtime.scheme import GroupVersion, Resource, Scheme
from kapi.runtime.strategy import ResourceStrategy
from kapi.storage.interface import CompactionRound, Storage, StorageUnavailableError
from kapi.storage.sqlite import SQLiteStorage
from kapi.storageversion.gc import StorageVersionGC
from kapi.storageversion.leaderelection import LeaderElector
from kapi.storageversion.manager import NO_ERROR, StorageVersionManager
from kapi.storageversion.migrator import StorageMigrator
from kapi.storageversion.resources import default_storage_version, resource_infos
from kapi.validation.declarative import DeclarativeValidation
from kapi.version import Version
from kapi.webhook import WebhookClientManager

log = logging.getLogger(__name__)


@dataclass
class ServerConfig:
    bind_address: str = "127.0.0.1"
    port: int = 6443
    data_dir: Path = field(default_factory=lambda: Path(".kapi"))
    feature_gates: FeatureGate = field(default_factory=FeatureGate)
    emulated_version: Version = kversion.DEFAULT_VERSION
    #: SQLite ``synchronous``: NORMAL survives a process crash, FULL also a power loss.
    sqlite_synchronous: str = "NORMAL"
    #: Open the SQLite file as one of several processes using it (``--workers``)
    #: rather than as its only owner.
    sqlite_shared: bool = False
    #: How often a quiet watch with ``allowWatchBookmarks`` gets a BOOKMARK (seconds).
    bookmark_interval: float = 60.0
    #: Compact storage history older than this many seconds, every this many seconds
    #: (``--etcd-compaction-interval``); 0 turns compaction off, as upstream's.
    compaction_interval: float = 300.0
    #: etcd client URLs (``--etcd-servers``); none: the embedded SQLite store in ``data_dir``.
    etcd_servers: tuple[str, ...] = ()
    #: Where in etcd the ``/registry`` tree lives (``--etcd-prefix``).
    etcd_prefix: str = "/registry"
    #: How long start-up keeps trying to reach etcd before it gives up (seconds).
    etcd_startup_timeout: float = 60.0
    #: How long the ``etcd`` health check waits for storage (``--etcd-healthcheck-timeout``).
    etcd_healthcheck_timeout: float = 2.0
    #: The host name the identity lease is named and labelled after (``--identity-hostname``);
    #: empty: this machine's.
    identity_hostname: str = ""
    identity_lease_duration_seconds: int = 3600
    identity_lease_renew_interval_seconds: int = 10
    #: Run the storage migrator (``--enable-storage-migrator``; issue 19 item 8).
    enable_storage_migrator: bool = False
    #: Events are deleted this many seconds after their last write (``--event-ttl``);
    #: below one second they never are, as upstream truncates it to whole seconds.
    event_ttl: float = 3600.0
    #: Deletes leave the garbage collector's finalizers, and the collector runs here.
    enable_garbage_collector: bool = True
    #: Audit log (upstream's ``--audit-*`` flags): off unless a log path is given; ``-`` is
    #: standard output.  Rotation sizes are in megabytes (0: lumberjack's 100), age in days.
    audit_log_path: str = ""
    audit_policy_file: str = ""
    audit_log_maxsize: int = 0
    audit_log_maxbackup: int = 0
    audit_log_maxage: int = 0
    #: Seconds a request's line and headers may take to arrive before the connection is
    #: closed (kube-apiserver's ``ReadHeaderTimeout``; kapi's ``--read-header-timeout``).
    read_header_timeout: float = READ_HEADER_TIMEOUT
    #: Seconds a kept-alive connection may wait for its next request before it is closed
    #: (kube-apiserver's ``IdleTimeout``; kapi's ``--idle-timeout``).
    idle_timeout: float = IDLE_TIMEOUT
    #: Resources stored in another version than their default, as (group, resource,
    #: version) (``--storage-versions``).
    storage_versions: tuple[tuple[str, str, str], ...] = ()
    #: Seconds between passes of the StorageVersion garbage collector.
    storage_version_gc_period: float = 60.0
    #: Test affordance: registration waits for SIGUSR1 (``--hold-storage-version-registration``).
    hold_storage_version_registration: bool = False
    #: The storage version GC's leader election (``--leader-elect-*``, seconds).
    leader_elect_lease_duration: float = 15.0
    leader_elect_renew_deadline: float = 10.0
    leader_elect_retry_period: float = 2.0
    #: Services' cluster IPs and node ports (``--service-cluster-ip-range``, one CIDR or
    #: two of different families; ``--service-node-port-range``).
    service_cluster_ip_range: str = DEFAULT_SERVICE_CLUSTER_IP_RANGE
    service_node_port_range: str = DEFAULT_SERVICE_NODE_PORT_RANGE
    #: The address the ``kubernetes`` Endpoints name (``--advertise-address``); empty:
    #: the bind address if routable, else the default route's interface's.
    advertise_address: str = ""
    #: Service account tokens: ``iss`` (``--service-account-issuer``), the PEM private key
    #: signing them (``--service-account-signing-key-file``; empty: one generated and
    #: kept in storage, shared by every server on it), and the default audiences
    #: (``--api-audiences``; empty: the issuer).
    service_account_issuer: str = DEFAULT_ISSUER
    service_account_signing_key_file: str = ""
    api_audiences: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Gates take the stage and default of the emulated release, whatever built them.
        self.feature_gates = self.feature_gates.at(self.emulated_version)


class APIServer:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.metrics = APIServerMetrics()
        self.scheme = Scheme(config.emulated_version)
        for resource in builtin_resources(config.feature_gates):
            resource.storage_version = default_storage_version(resource, config.emulated_version)
            self.scheme.add(resource)
        self.service_network = ServiceNetwork.parse(
            config.service_cluster_ip_range, config.service_node_port_range
        )
        services = self.scheme.lookup("", "v1", "services")
        if services is not None and isinstance(services.strategy, ServiceStrategy):
            services.strategy.network = self.service_network
        self.token_subresource: TokenSubresource | None = None
        for group, plural, version in config.storage_versions:
            for resource in self.scheme.resources():
                if (resource.group, resource.plural) == (group, plural):
                    resource.storage_version = version
        self.storage: Storage | None = None
        self.stores: dict[tuple[str, str], Store] = {}
        #: Built-in kinds' declarations, checked beside their hand-written validation
        #: (shadow mode) and deciding which hand-written errors ratchet on updates.
        shadow = config.feature_gates.enabled("DeclarativeValidation")
        ratcheting = config.feature_gates.enabled("CRDValidationRatcheting")
        self.declarative_validation = (
            DeclarativeValidation(
                self.metrics.declarative_validation_mismatch.inc if shadow else None,
                ratcheting=self.metrics if ratcheting else None,
            )
            if shadow or ratcheting
            else None
        )
        #: KEP-2558: disabled fields dropped, alpha and deprecated ones warned on, per write.
        self.field_lifecycle = FieldLifecyclePolicy(
            config.feature_gates, self.metrics.count_deprecated_field
        )
        self.webhook_clients = WebhookClientManager()
        self.custom_resources = CustomResourceStores(
            self.scheme,
            self.stores,
            self._new_store,
            self.webhook_clients,
            config.feature_gates,
            self.metrics,
        )
        self.webhook_source = WebhookSource()
        #: The namespaces, for admission: read on every create of namespaced content.
        self.namespace_informer = Informer()
        get_namespace = namespace_getter(self.namespace_informer, self._stored_namespace)
        webhooks = (self.scheme, self.webhook_clients, get_namespace, self.webhook_source)
        self.admission = AdmissionChain(
            [
                NamespaceLifecycle(self.namespace_informer, self._stored_namespace),
                LimitRanger(self._stored_limit_ranges),
                PriorityAdmission(self._priority_classes),
                DefaultIngressClass(self._ingress_classes),
                MutatingWebhookAdmission(*webhooks),
                ValidatingWebhookAdmission(*webhooks),
                # Last: only a dry run that every other plugin let through gets the report.
                CRDPreflight(
                    self.custom_resources.store, self.webhook_clients, config.feature_gates
                ),
            ]
        )
        self.health = {
            kind: HealthChecks(kind, self.metrics) for kind in ("healthz", "livez", "readyz")
        }
        self.openapi = OpenAPIService(self.scheme)
        #: ``None`` when auditing is off: the handler chain then does no audit work.
        self.audit = Auditor.from_flags(
            config.audit_log_path,
            config.audit_policy_file,
            config.audit_log_maxsize,
            config.audit_log_maxbackup,
            config.audit_log_maxage,
        )
        self.address = f"{config.bind_address}:{config.port}"
        self._tasks: list[asyncio.Task[Any]] = []
        self._post_start_done: set[str] = set()
        #: This server's ID (upstream's ``APIServerID``): its identity lease's name; empty
        #: when the APIServerIdentity gate is off, as upstream leaves it.
        self.identity = ""
        self.identity_hostname = ""
        if config.feature_gates.enabled("APIServerIdentity"):
            self.identity_hostname = config.identity_hostname or socket.gethostname()
            self.identity = apiserver_id(self.identity_hostname)
        self.identity_lease: IdentityLeaseController | None = None
        #: KEP-2339 registration and its write gate: only with both StorageVersionAPI and
        #: APIServerIdentity on, as upstream.
        self.storage_version_gate: _StorageVersionGate | None = None
        if self.identity and config.feature_gates.enabled("StorageVersionAPI"):
            self.storage_version_gate = _StorageVersionGate()
        self.storage_version_manager: StorageVersionManager | None = None
        #: Why start-up failed, for the command to report (empty: it did not).
        self.startup_error = ""
        #: Set when shutdown begins (a signal): watches end and /readyz fails at once.
        self.stopping = asyncio.Event()
        self._register_health_checks()

    # -- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        self.config.data_dir.mkdir(parents=True, exist_ok=True)
        if self.audit is not None:
            self.audit.start()
        self.storage = await self._open_storage()
        event_ttl = int(self.config.event_ttl)
        for resource in self.scheme.resources():
            self.stores[(resource.group, resource.plural)] = Store(
                resource,
                self.storage,
                self.scheme,
                self.admission,
                ttl=event_ttl if resource.strategy.expires_after_event_ttl else 0,
                declarative=self.declarative_validation,
                field_lifecycle=self.field_lifecycle,
                garbage_collection=self.config.enable_garbage_collector,
            )
        await ensure_system_namespaces(self.store("", "namespaces"))
        self._post_start_done.add("start-system-namespaces-controller")
        await self._start_service_controllers()
        self._spawn(self.namespace_informer.run(self.store("", "namespaces")))
        crds = self.store(APIEXTENSIONS, "customresourcedefinitions")
        self._spawn(
            NamespaceController(
                self.store("", "namespaces"), self.stores.values, crds, self.custom_resources
            ).run()
        )
        if self.config.enable_garbage_collector:
            collector = GarbageCollector(self.storage, self.stores.values, self._owner_store)
            # One collector for all the servers sharing storage, as kube-controller-manager
            # runs one, its elected leader's: each would follow every write otherwise.
            if self.identity:
                self._spawn(self._elector(GARBAGE_COLLECTOR_LEASE).run(collector.run))
            else:
                self._spawn(collector.run())
        # Upstream's pvc-protection and pv-protection controllers (kube-controller-manager).
        self._spawn(
            claim_protection(self.store("", "persistentvolumeclaims"), self.store("", "pods")).run()
        )
        self._spawn(volume_protection(self.store("", "persistentvolumes")).run())
        if self.identity:
            self._start_identity_controllers()
        if self.storage_version_gate is not None:
            self._start_storage_versions(self.storage_version_gate)
        # Custom resources are served once their storage versions are recorded.
        self._spawn(CRDController(crds, self.custom_resources, self.storage_version_manager).run())
        self._spawn(self.webhook_source.run(self.stores))
        self._start_rbac()
        self._spawn(
            bootstrap_priority_classes(
                self.store(SCHEDULING, "priorityclasses"),
                functools.partial(self._post_start_done.add, PRIORITY_CLASS_BOOTSTRAP_HOOK),
            )
        )
        self._start_flowcontrol()
        if self.config.compaction_interval > 0:
            self._spawn(self._compact_periodically())
        self._post_start_done.add("start-kapi-controllers")
        if self.config.enable_storage_migrator and self.config.feature_gates.enabled(
            "StorageVersionMigrator"
        ):
            self._start_storage_migrator()
        # Everything allocated so far lives as long as the server: keep it out of the
        # collector's generations, so collections triggered by requests stay short.
        gc.collect()
        gc.freeze()

    async def stop(self) -> None:
        """Stop controllers, then close storage so every committed write is checkpointed."""
        self.stopping.set()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.webhook_clients.aclose()
        if self.storage is not None:
            await self.storage.close()
        if self.audit is not None:
            # Last: every request served before shutdown has its events written.
            await asyncio.to_thread(self.audit.close)

    async def _open_storage(self) -> Storage:
        """The backend the flags choose: etcd when servers are given, else SQLite.

        etcd is retried with a growing pause for ``etcd_startup_timeout`` seconds;
        past that start-up fails with the last error.
        """
        config = self.config
        if not config.etcd_servers:
            return SQLiteStorage(
                config.data_dir / "kapi.db",
                synchronous=config.sqlite_synchronous,
                shared=config.sqlite_shared,
            )
        # Imported here: a server on SQLite never loads the etcd client (grpc).
        from kapi.storage.etcd import EtcdStorage

        endpoints = list(config.etcd_servers)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + config.etcd_startup_timeout
        pause = 0.1
        while True:
            opened: Storage | None = None
            try:
                storage: Storage = await asyncio.wait_for(
                    EtcdStorage.connect(endpoints, prefix=config.etcd_prefix),
                    max(deadline - loop.time(), 0.1),
                )
                opened = storage
                # A client may connect lazily: one read proves etcd answers.
                await asyncio.wait_for(storage.current_revision(), max(deadline - loop.time(), 0.1))
                return storage
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if opened is not None:
                    with contextlib.suppress(Exception):
                        await opened.close()
                reason = str(exc) or type(exc).__name__
                if loop.time() + pause >= deadline:
                    self.startup_error = (
                        f"unable to reach etcd at {','.join(endpoints)} within "
                        f"{config.etcd_startup_timeout:g}s: {reason}"
                    )
                    raise StorageUnavailableError(self.startup_error) from exc
                log.warning("etcd at %s is not reachable yet: %s", ",".join(endpoints), reason)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 2.0)

    def _start_rbac(self) -> None:
        """Upstream's ``rbac/bootstrap-roles`` hook, and the ClusterRole aggregation that
        kube-controller-manager runs upstream (see :mod:`kapi.controllers.rbac`)."""
        cluster_roles = self.store(RBAC, "clusterroles")
        bindings = self.store(RBAC, "clusterrolebindings")
        done = functools.partial(self._post_start_done.add, RBAC_BOOTSTRAP_HOOK)
        self._spawn(bootstrap_policy(cluster_roles, bindings, done))
        self._spawn(ClusterRoleAggregationController(cluster_roles).run())

    def _start_flowcontrol(self) -> None:
        """Upstream's ``priority-and-fairness-config-producer`` hook (see
        :mod:`kapi.controllers.flowcontrol`), where the emulated release serves the group."""
        done = functools.partial(self._post_start_done.add, APF_BOOTSTRAP_HOOK)
        schemas = self.scheme.by_kind(FLOWCONTROL, "FlowSchema")
        if schemas is None or not any(self.scheme.served(schemas, v) for v in schemas.versions):
            done()
            return
        flow_schemas = self.store(FLOWCONTROL, "flowschemas")
        levels = self.store(FLOWCONTROL, "prioritylevelconfigurations")
        dangling = DanglingConditionController(flow_schemas, levels)
        self._spawn(apf_producer(flow_schemas, levels, done, first_pass_also=dangling.sync_storage))
        self._spawn(dangling.run())

    async def _start_service_controllers(self) -> None:
        """Service allocation (hooks on the Service store), the ``kubernetes`` Service and
        the repair loop; the signing key of service account tokens."""
        assert self.storage is not None
        config = self.config
        allocator = ServiceAllocator(self.storage, self.service_network)
        self.store("", "services").hooks = allocator
        address = config.advertise_address or advertise_address(config.bind_address)
        controller = KubernetesServiceController(
            self.store("", "services"),
            self.store("", "endpoints"),
            self.store("discovery.k8s.io", "endpointslices"),
            allocator,
            self.service_network,
            address,
            config.port,
        )
        # The first pass before serving: the default Service exists once /readyz is ok.
        try:
            await controller.sync(refresh_endpoints=True)
        except Exception:
            log.exception("reconciling the kubernetes service failed")
        self._spawn(controller.run())
        if config.service_account_signing_key_file:
            key = load_private_key(Path(config.service_account_signing_key_file).read_bytes())
        else:
            key = await shared_signing_key(self.storage)
        issuer = TokenIssuer(TokenSigner(key, config.service_account_issuer), config.api_audiences)
        self.token_subresource = TokenSubresource(issuer, self._get_core_object)

    def _get_core_object(self, plural: str, namespace: str | None, name: str) -> Any:
        """A read of a core object, for binding tokens; ``None`` when kapi does not serve it."""
        store = self.stores.get(("", plural))
        return store.get(namespace, name) if store is not None else None

    async def _create_token(self, scope: Any, request: Any) -> Any:
        assert self.token_subresource is not None
        return await self.token_subresource.create(scope, request)

    def _start_identity_controllers(self) -> None:
        """Upstream's identity lease post-start hooks: the heartbeat, and collecting
        the leases of servers gone; the collector runs once a lease duration."""
        leases = self.store("coordination.k8s.io", "leases")
        config = self.config
        self.identity_lease = IdentityLeaseController(
            leases,
            self.identity_hostname,
            lease_duration_seconds=config.identity_lease_duration_seconds,
            renew_interval=config.identity_lease_renew_interval_seconds,
        )
        self._spawn(self.identity_lease.run())
        self._post_start_done.add("start-kube-apiserver-identity-lease-controller")
        gc = IdentityLeaseGC(leases, period=config.identity_lease_duration_seconds)
        self._spawn(gc.run())
        self._post_start_done.add("start-kube-apiserver-identity-lease-garbage-collector")

    def _start_storage_versions(self, gate: _StorageVersionGate) -> None:
        """KEP-2339: register this server's storage versions (upstream's
        ``built-in-resources-storage-version-updater`` hook) and collect the entries
        of servers gone, the latter on the elected server only."""
        storage_versions = self.store("internal.apiserver.k8s.io", "storageversions")
        leases = self.store("coordination.k8s.io", "leases")
        manager = StorageVersionManager(storage_versions, self.identity)
        manager.add_resource_info(*resource_infos(self.scheme))
        self.storage_version_manager = manager
        gate.manager = manager
        if self.config.hold_storage_version_registration:
            manager.hold()
            asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, manager.release)
        self._spawn(self._register_storage_versions(manager, leases))
        config = self.config
        collector = StorageVersionGC(storage_versions, leases, config.storage_version_gc_period)
        self._spawn(self._elector(STORAGE_VERSION_GC_LEASE).run(collector.run))

    def _start_storage_migrator(self) -> None:
        """The in-server storage migrator; with several servers, on the elected one only,
        so that each migration is carried out once."""
        assert self.storage is not None
        migrator = StorageMigrator(
            lambda g, r: self.stores.get((g, r)), self.storage, metrics=self.metrics
        )
        if not self.identity:
            self._spawn(migrator.run())
            return
        self._spawn(self._elector(STORAGE_MIGRATOR_LEASE).run(migrator.run))

    def _elector(self, lease_name: str) -> LeaderElector:
        """A leader election among the servers sharing storage, on a kube-system lease."""
        config = self.config
        return LeaderElector(
            self.store("coordination.k8s.io", "leases"),
            "kube-system",
            lease_name,
            f"{self.identity}_{uuid.uuid4()}",
            lease_duration=config.leader_elect_lease_duration,
            renew_deadline=config.leader_elect_renew_deadline,
            retry_period=config.leader_elect_retry_period,
        )

    async def _register_storage_versions(
        self, manager: StorageVersionManager, leases: Store
    ) -> None:
        """Wait for this server's identity lease, register every resource, and
        register again every :data:`STORAGE_VERSION_REFRESH` seconds, as upstream."""
        while True:
            try:
                await leases.get("kube-system", self.identity)
                break
            except Exception:
                await asyncio.sleep(0.1)
        if manager.held:
            log.info("storage version registration held until this process gets SIGUSR1")
        while True:
            try:
                await manager.update_storage_versions()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("storage version registration failed")
            await asyncio.sleep(
                STORAGE_VERSION_REFRESH if manager.completed() else STORAGE_VERSION_RETRY
            )

    def _spawn(self, coro: Any) -> None:
        self._tasks.append(asyncio.create_task(coro))

    def app(self) -> APIServerApp:
        """This server's ASGI application: the handler chain, handed what it serves with."""
        return APIServerApp(
            HandlerConfig(
                scheme=self.scheme,
                store_for=self.custom_resources.store_for,
                metrics=self.metrics,
                audit=self.audit,
                health=self.health,
                version_info=self.version_info,
                address=self.address,
                openapi=self.openapi,
                bookmark_interval=self.config.bookmark_interval,
                stopping=self.stopping,
                start=self.start,
                stop=self.stop,
                storage_versions=self.storage_version_gate,
                subresource_creates={("", "serviceaccounts", "token"): self._create_token},
            )
        )

    def store(self, group: str, plural: str) -> Store:
        return self.stores[(group, plural)]

    async def _priority_classes(self) -> list[dict[str, Any]]:
        """Every stored PriorityClass, for the Priority admission plugin."""
        listed = await self.store(SCHEDULING, "priorityclasses").list(None, SelectionPredicate())
        return listed.items

    async def _stored_namespace(self, name: str) -> dict[str, Any]:
        """A namespace read from storage (admission reads its informer first)."""
        return await self.store("", "namespaces").get(None, name)

    def _owner_store(self, api_version: str, kind: str) -> Store | None:
        """The store of an owner reference's kind: its group's, whatever the version."""
        group = GroupVersion.parse(api_version).group
        for store in list(self.stores.values()):
            if store.resource.kind == kind and store.resource.group == group:
                return store
        return None

    async def _ingress_classes(self) -> list[Any]:
        """Every stored IngressClass (the DefaultIngressClass plugin's lister)."""
        listed = await self.store("networking.k8s.io", "ingressclasses").list(None, EVERYTHING)
        return listed.items

    async def _stored_limit_ranges(self, namespace: str) -> list[dict[str, Any]]:
        """A namespace's LimitRanges, read from storage for each pod created (LimitRanger)."""
        return (await self.store("", "limitranges").list(namespace, EVERYTHING)).items

    def _new_store(
        self,
        resource: Resource,
        *,
        version: str | None = None,
        strategy: ResourceStrategy | None = None,
        lifecycle_paths: tuple[TaggedPath, ...] | None = None,
    ) -> Store:
        """A store over this server's storage, scheme and admission (custom resources')."""
        assert self.storage is not None
        return Store(
            resource,
            self.storage,
            self.scheme,
            self.admission,
            version=version,
            strategy=strategy,
            field_lifecycle=self.field_lifecycle,
            lifecycle_paths=lifecycle_paths,
            garbage_collection=self.config.enable_garbage_collector,
        )

    async def _compact_periodically(self) -> None:
        assert self.storage is not None
        await compact_periodically(self.storage, self.config.compaction_interval)

    # -- health -----------------------------------------------------------------------

    def _register_health_checks(self) -> None:
        async def ping() -> None:
            return None

        probe = _StorageProbe(lambda: self.storage, self.config.etcd_healthcheck_timeout)
        component_statuses = self.scheme.by_kind("", "ComponentStatus")
        if component_statuses is not None and isinstance(
            component_statuses.reader, ComponentStatusReader
        ):
            component_statuses.reader.probe = probe.check

        async def shutdown() -> None:
            if self.stopping.is_set():
                raise RuntimeError("process is shutting down")

        def post_start(name: str) -> Any:
            async def check() -> None:
                if name not in self._post_start_done:
                    raise RuntimeError("not finished")

            return check

        hooks = [
            "start-system-namespaces-controller",
            "start-kapi-controllers",
            RBAC_BOOTSTRAP_HOOK,
            PRIORITY_CLASS_BOOTSTRAP_HOOK,
            APF_BOOTSTRAP_HOOK,
        ]
        if self.identity:
            hooks += [
                "start-kube-apiserver-identity-lease-controller",
                "start-kube-apiserver-identity-lease-garbage-collector",
            ]

        async def storage_versions_registered() -> None:
            manager = self.storage_version_manager
            if manager is None or not manager.completed():
                raise RuntimeError("not finished")

        for kind, checks in self.health.items():
            checks.add("ping", ping)
            checks.add("log", ping)
            # Upstream's name; it reads the storage in use, SQLite's or etcd's.
            checks.add("etcd", probe.check)
            if kind == "readyz":
                checks.add("etcd-readiness", probe.check)
                checks.add("shutdown", shutdown)
            for hook in hooks:
                checks.add(f"poststarthook/{hook}", post_start(hook))
            if self.storage_version_gate is not None:
                checks.add(f"poststarthook/{STORAGE_VERSION_HOOK}", storage_versions_registered)

    # -- /version ---------------------------------------------------------------------

    def version_info(self) -> dict[str, str]:
        emulated = self.config.emulated_version
        return {
            "major": str(emulated.major),
            "minor": str(emulated.minor),
            "emulationMajor": str(emulated.major),
            "emulationMinor": str(emulated.minor),
            "minCompatibilityMajor": str(emulated.major),
            "minCompatibilityMinor": str(emulated.minor - 1),
            "gitVersion": f"v{emulated}.0+kapi.{kversion.KAPI_VERSION}",
            "gitCommit": "",
            "gitTreeState": "clean",
            "buildDate": "",
            "goVersion": "python",
            "compiler": "cpython",
            "platform": "linux/amd64",
        }


#: Upstream's post-start hook registering the built-in resources' storage versions.
STORAGE_VERSION_HOOK = "built-in-resources-storage-version-updater"
#: How often the registration is done again (upstream: every 10 minutes).
STORAGE_VERSION_REFRESH = 600.0
#: The lease the servers elect the storage version garbage collector's runner with.
STORAGE_VERSION_GC_LEASE = "kapi-storage-version-gc"
#: The lease the servers elect the in-server storage migrator's runner with.
STORAGE_MIGRATOR_LEASE = "kapi-storage-migrator"
#: The lease the servers elect the garbage collector's runner with.
GARBAGE_COLLECTOR_LEASE = "kapi-garbage-collector"
#: The pause before a registration pass that failed is tried again (seconds); writes
#: to the resources it failed on wait for it, so it is far shorter than the refresh.
STORAGE_VERSION_RETRY = 1.0


class _StorageVersionGate:
    """The write gate's view of the manager, which exists once storage is open.

    The handler chain gets this at construction, before start-up; no request is
    served before start-up has made the manager, but until then it is pending.
    """

    def __init__(self) -> None:
        self.manager: StorageVersionManager | None = None

    def has_pending(self) -> bool:
        return self.manager is None or self.manager.has_pending()

    def pending_update(self, group: str, resource: str) -> bool:
        return self.manager is None or self.manager.pending_update(group, resource)

    async def wait_registered(self, group: str, resource: str) -> bool:
        return self.manager is not None and await self.manager.wait_registered(group, resource)

    def last_update_error(self, group: str, resource: str) -> str:
        return NO_ERROR if self.manager is None else self.manager.last_update_error(group, resource)


async def compact_periodically(
    storage: Storage, interval: float, state: CompactionRound | None = None
) -> None:
    """Compact history older than one interval, every interval, as kube-apiserver's
    compactor does, until cancelled.

    Each round waits out the interval first and then runs ``storage.compact_round``:
    servers sharing storage (on etcd, or the workers on one SQLite file) take turns,
    one compaction per interval between them; a server that owns its file just
    compacts.  A failed round (storage out of
    reach) is logged and the next one tried; the loop never ends on an error.
    ``state`` (a fresh one if not given) is where the rounds stand.
    """
    state = state if state is not None else CompactionRound()
    while True:
        await asyncio.sleep(interval)
        try:
            await storage.compact_round(state)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.error("storage compaction failed: %s", exc)


class _StorageProbe:
    """The ``etcd`` health check: a read of the storage's revision within ``timeout``.

    As upstream's etcd check, storage is asked at most once per half timeout;
    checks in between answer with the last result.
    """

    def __init__(self, storage: Callable[[], Storage | None], timeout: float) -> None:
        self._storage = storage
        self._timeout = timeout
        self._last_at: float | None = None
        self._last_error: Exception | None = RuntimeError("storage not open")

    async def check(self) -> None:
        now = asyncio.get_running_loop().time()
        if self._last_at is None or now - self._last_at >= self._timeout / 2:
            self._last_at = now
            self._last_error = await self._probe()
        if self._last_error is not None:
            raise self._last_error

    async def _probe(self) -> Exception | None:
        storage = self._storage()
        if storage is None:
            return RuntimeError("storage not open")
        try:
            await asyncio.wait_for(storage.current_revision(), self._timeout)
        except TimeoutError:
            return RuntimeError(f"storage did not answer within {self._timeout:g}s")
        except Exception as exc:
            return exc
        return None


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


#: How kapi runs uvicorn (the benchmark's bare app uses the same): the fastest event
#: loop, the httptools parser writing each response in one piece, no access log, no
#: X-Forwarded-* rewriting of the client, and no ``Server`` header, which
#: kube-apiserver (Go's net/http) does not send either; ``Date`` stays, as there.
UVICORN_OPTIONS: dict[str, Any] = {
    "loop": "uvloop",
    "http": CoalescingHttpToolsProtocol,
    "lifespan": "on",
    "log_level": "warning",
    "access_log": False,
    "proxy_headers": False,
    "server_header": False,
    "timeout_graceful_shutdown": 5,
    # kube-apiserver's IdleTimeout (a kept-alive connection without a request is closed)
    # is the protocol's idle_timeout, which it puts in place of uvicorn's keep-alive one.
}


def uvicorn_options(config: ServerConfig) -> dict[str, Any]:
    """uvicorn's options for this server: the protocol carries its connection limits."""
    return {
        **UVICORN_OPTIONS,
        "http": protocol_with_limits(
            max_header_bytes=MAX_HEADER_BYTES,
            read_header_timeout=config.read_header_timeout,
            idle_timeout=config.idle_timeout,
        ),
    }


def serve(config: ServerConfig, *, reuse_port: bool = False) -> int:
    """Run the server until SIGINT/SIGTERM, then drain and stop as kube-apiserver does.

    Returns the process's exit code: 0 after a clean shutdown, 1 when start-up
    failed (storage unreachable, ...), with the reason on standard error.

    ``reuse_port``: listen with ``SO_REUSEPORT``, so that several processes (the
    workers of ``kapi serve --workers``) share the port and the kernel spreads
    connections over them.  Off otherwise: a second server on a taken port must
    fail, not quietly take half of its connections.
    """
    import uvicorn

    server = APIServer(config)
    uvicorn_config = uvicorn.Config(
        server.app(), host=config.bind_address, port=config.port, **uvicorn_options(config)
    )
    # uvicorn re-raises the shutdown signal to the handler installed before it; a no-op
    # handler there makes a clean shutdown exit 0, as kube-apiserver does.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: None)
    sockets = [shared_listener(config.bind_address, config.port)] if reuse_port else None
    runner = _Uvicorn(uvicorn_config, server)
    # uvicorn exits (status 3) when the application's start-up fails.
    with contextlib.suppress(SystemExit):
        runner.run(sockets=sockets)
    if not runner.started:
        reason = server.startup_error or "start-up failed (see the log above)"
        print(f"Error: {reason}", file=sys.stderr, flush=True)
        return 1
    return 0


def shared_listener(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` that other processes may bind as well.

    It is not listening yet: uvicorn listens once the server has started, and
    only then does the kernel hand this process connections, so a worker still
    starting (or failing to) never holds connections the others could serve.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


class _Uvicorn(uvicorn.Server):
    """uvicorn, telling the API server the moment shutdown begins.

    uvicorn waits for open connections before its lifespan shutdown; watches
    are long-lived, so they must end first, when the signal arrives.
    """

    def __init__(self, config: uvicorn.Config, api_server: APIServer) -> None:
        super().__init__(config)
        self.api_server = api_server

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        asyncio.get_running_loop().call_soon(self.api_server.stopping.set)
        super().handle_exit(sig, frame)
