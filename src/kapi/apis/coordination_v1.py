"""coordination.k8s.io/v1 ``Lease``: the leader-election and heartbeat object.

Schema from ``k8s.io/api/coordination/v1``; validation from upstream
``ValidateLease`` (``pkg/apis/coordination/validation``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import FieldError, Path, forbidden, invalid, not_supported
from kapi.apimachinery.unstructured import Object
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.lifecycle import FieldLifecycle
from kapi.runtime.meta import kind_struct
from kapi.runtime.schema import INT32, STRING, Field, MicroTime, Struct
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.version import Version

#: Upstream gates both coordinated-election fields of LeaseSpec (``+featureGate=``):
#: alpha in 1.31, beta (still off by default) from 1.33.
COORDINATED_LEADER_ELECTION = FieldLifecycle("v1.31", "beta", "CoordinatedLeaderElection")


def canonical_micro_time(value: str) -> str:
    """How ``MicroTime`` serialises: UTC, six fractional digits (``RFC3339Micro``).

    Values that do not parse are returned unchanged; decoding reports them.
    """
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return value
    if parsed.tzinfo is None:
        return value
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def micro_time(moment: datetime) -> str:
    """``metav1.MicroTime`` as JSON: UTC with six fractional digits."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def lease_expired(lease: Object, now: datetime) -> bool:
    """Upstream's ``isLeaseExpired``: no renewTime or duration, or renewTime + duration < now."""
    spec = lease.get("spec") or {}
    renew, duration = spec.get("renewTime"), spec.get("leaseDurationSeconds")
    if not isinstance(renew, str) or not isinstance(duration, int):
        return True
    try:
        renewed = datetime.fromisoformat(renew)
    except ValueError:
        return True
    if renewed.tzinfo is None:
        renewed = renewed.replace(tzinfo=UTC)
    return renewed + timedelta(seconds=duration) < now


HOLDER_IDENTITY_DOC = (
    "Who holds the lease now. Under coordinated election it must name the chosen LeaseCandidate."
)

LeaseSpec = Struct(
    "io.k8s.api.coordination.v1.LeaseSpec",
    (
        Field("holderIdentity", STRING, HOLDER_IDENTITY_DOC),
        Field(
            "leaseDurationSeconds",
            INT32,
            "Seconds after the last renewTime before another candidate may take the lease.",
        ),
        Field("acquireTime", MicroTime(), "When the present holder took the lease."),
        Field("renewTime", MicroTime(), "When the holder last renewed the lease."),
        Field("leaseTransitions", INT32, "How many times the lease has changed hands."),
        Field(
            "strategy",
            STRING,
            "How coordinated leader election picks the holder, e.g. OldestEmulationVersion; "
            "unset means the lease is not coordinated. Needs the CoordinatedLeaderElection "
            "feature gate.",
            lifecycle=(COORDINATED_LEADER_ELECTION,),
        ),
        Field(
            "preferredHolder",
            STRING,
            "A better candidate the holder is asked to hand over to; allowed only with strategy.",
            lifecycle=(COORDINATED_LEADER_ELECTION,),
        ),
    ),
    "Who holds a Lease, since when, and for how long.",
)

Lease = kind_struct(
    "io.k8s.api.coordination.v1.Lease",
    (("coordination.k8s.io", "v1", "Lease"),),
    (Field("spec", LeaseSpec, "The holder and timing of the lease."),),
    "A lock with an expiry, used for leader election and node heartbeats.",
)

#: ``validLeaseStrategies``: the Kubernetes-defined (unprefixed) strategies.
VALID_LEASE_STRATEGIES = ("OldestEmulationVersion",)


def validate_lease_strategy(strategy: str, path: Path) -> list[FieldError]:
    """``ValidateCoordinatedLeaseStrategy``: a known name, or a qualified ``prefix/name``.

    Upstream reports at ``path.Child("strategy")`` although ``path`` already ends
    in ``strategy``; the doubled segment is kept for identical messages.
    """
    path = path.child("strategy")
    if "/" not in strategy:
        if strategy in VALID_LEASE_STRATEGIES:
            return []
        return [not_supported(path, strategy, VALID_LEASE_STRATEGIES)]
    return [invalid(path, strategy, msg) for msg in validation.is_qualified_name(strategy)]


def validate_lease_spec(spec: Object, path: Path) -> list[FieldError]:
    """``ValidateLeaseSpec``."""
    errs: list[FieldError] = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and duration <= 0:
        errs.append(invalid(path.child("leaseDurationSeconds"), duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and transitions < 0:
        errs.append(
            invalid(path.child("leaseTransitions"), transitions, validation.IS_NEGATIVE_ERROR_MSG)
        )
    strategy = spec.get("strategy")
    if strategy is not None:
        errs += validate_lease_strategy(strategy, path.child("strategy"))
    if spec.get("preferredHolder") and not strategy:
        detail = "may only be specified if `strategy` is defined"
        errs.append(forbidden(path.child("preferredHolder"), detail))
    return errs


class LeaseStrategy(Strategy):
    """Upstream ``leaseStrategy``: spec validation on create and update.

    Not modelled: dropping ``strategy``/``preferredHolder`` while the
    CoordinatedLeaderElection gate is off (strategies get no feature gates).
    """

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_lease_spec(obj.get("spec") or {}, Path("spec"))

    def canonicalize(self, obj: Object) -> None:
        spec = obj.get("spec") or {}
        for name in ("acquireTime", "renewTime"):
            if isinstance(spec.get(name), str):
                spec[name] = canonical_micro_time(spec[name])


def resources() -> list[Resource]:
    """The coordination.k8s.io/v1 resources this module defines."""
    return [
        Resource(
            group="coordination.k8s.io",
            kind="Lease",
            plural="leases",
            singular="lease",
            namespaced=True,
            versions={"v1": ResourceVersion("v1", Lease, Lifecycle(introduced=Version(1, 14)))},
            hub_version="v1",
            storage_version="v1",
            strategy=LeaseStrategy(),
            columns=(
                NAME,
                Column(
                    "Holder",
                    "string",
                    HOLDER_IDENTITY_DOC,
                    lambda obj: (obj.get("spec") or {}).get("holderIdentity") or "",
                ),
                AGE,
            ),
        )
    ]
