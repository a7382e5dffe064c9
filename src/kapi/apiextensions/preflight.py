"""Pre-flight report of a CRD change: which stored objects the new schemas would reject.

KEP-4008 lists an "offline pass" over stored objects as an alternative to
ratcheting; this is that pass, offered beside ratcheting rather than instead
of it.  Given the new CRD and the objects stored for its resource, each
object is checked against each version the new CRD serves, with the
strategy that would serve that version (the same schema validator, CEL rules
and scale checks, compiled by :func:`~kapi.apiextensions.resource.custom_resource`),
twice:

* as a **create** would see it: pruned and defaulted by the version's schema,
  prepared for create (a status subresource's ``status`` is dropped), validated;
* as an **update that changes nothing** would see it: the object as a read
  answers it (defaulted, not pruned) is the old object, and that read decoded
  as a request body (pruned, defaulted) the new one; validated as an update,
  so with ``CRDValidationRatcheting`` on errors on unchanged values are
  forgiven, and what the engine never forgives (embedded-resource errors,
  transition rules, new list-type duplicates, rule evaluation errors) is
  still reported.

Each (object, version) gets a :class:`Verdict`: accepted; rejected on create
but accepted unchanged (it *ratchets*); or rejected even unchanged.

With conversion strategy ``None`` an object is checked in every served
version (only ``apiVersion`` differs).  With a conversion webhook the object
is checked only in the version it is stored in, when the new CRD serves it:
calling the webhook for every stored object is left to real requests.

:class:`CRDPreflight` runs the report on a ``dryRun=All`` update (PUT or
PATCH) of a CRD that changes its ``spec``, and answers it as ``Warning``
headers (see :meth:`Report.warnings`): ``kapi crd check`` sends that dry run
and prints the report as a table.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field

import orjson

from kapi.apiextensions.resource import custom_resource
from kapi.apiextensions.strategy import CustomResourceStrategy
from kapi.apimachinery.errors import StatusError
from kapi.apimachinery.unstructured import Object
from kapi.apis.apiextensions_v1 import GROUP
from kapi.features import FeatureGate
from kapi.registry.admission import Attributes, Operation
from kapi.registry.store import Store
from kapi.request import current as current_request
from kapi.runtime.cooperative import CHUNK, pause
from kapi.runtime.objects import deep_copy
from kapi.runtime.scheme import ResourceVersion
from kapi.webhook import WebhookClientManager

log = logging.getLogger(__name__)

#: Every warning of the report starts with this, so clients can tell them from others.
PREFIX = "preflight: "
#: At most this many (object, version) lines; a last line counts the rest.
MAX_LISTED = 20
#: Each listed line is cut to about this many characters: the whole report then fits
#: the 4096-character warning budget of a response (see :mod:`kapi.warning`) whole.
MAX_LINE = 180
#: Stored objects read per storage page.
_PAGE = 500


class Verdict(enum.Enum):
    """What a version of the new CRD would do with one stored object."""

    #: Accepted on create (and so on an unchanged update).
    ACCEPTED = "accepted"
    #: Rejected on create; an update that leaves the failing values unchanged is accepted.
    RATCHETS = "ratchets"
    #: Rejected even by an update that changes nothing.
    REJECTED = "rejected"


#: How each verdict other than ACCEPTED reads in a warning (``kapi crd check`` parses it).
VERDICT_TEXT = {
    Verdict.RATCHETS: "rejected on create, accepted unchanged (ratcheting)",
    Verdict.REJECTED: "rejected even unchanged",
}


@dataclass(frozen=True)
class Finding:
    """One stored object that one version of the new CRD would reject."""

    #: ``namespace/name``, or ``name`` for a cluster-scoped resource.
    object: str
    version: str
    verdict: Verdict
    #: The first error of the request that decides the verdict.
    error: str
    #: How many errors that request has.
    errors: int


@dataclass
class Report:
    """The verdicts on a resource's stored objects under a new CRD."""

    kind: str
    #: The served versions of the new CRD the objects were checked in.
    versions: list[str]
    #: Whether the new CRD converts with a webhook (objects are then checked in their own
    #: version only).
    webhook: bool = False
    #: How many stored objects were read.
    objects: int = 0
    #: Stored objects that no version could be checked in (webhook conversion, and the
    #: version they are stored in is not served).
    unchecked: int = 0
    #: Every rejected (object, version), in storage key order.
    findings: list[Finding] = field(default_factory=list)
    #: The worst verdict of each object that has a finding, by object.
    worst: dict[str, Verdict] = field(default_factory=dict)

    def add(self, finding: Finding) -> None:
        self.findings.append(finding)
        if self.worst.get(finding.object) is not Verdict.REJECTED:
            self.worst[finding.object] = finding.verdict

    def count(self, verdict: Verdict) -> int:
        """Objects whose worst verdict, over the versions checked, is ``verdict``."""
        return sum(1 for v in self.worst.values() if v is verdict)

    @property
    def verdict(self) -> Verdict:
        """The worst verdict of all."""
        if self.count(Verdict.REJECTED):
            return Verdict.REJECTED
        return Verdict.RATCHETS if self.worst else Verdict.ACCEPTED

    def warnings(self, limit: int = MAX_LISTED) -> list[str]:
        """The report as warning texts; none when every object is accepted.

        First a summary with the counts (first, so that a response whose
        warnings overflow the budget still carries it), then one line per
        rejected (object, version), at most ``limit`` of them, then how many
        were left out::

            preflight: 2 of 5 stored Widget objects would be rejected on create by the new
              schema: 1 accepted unchanged (ratcheting), 1 rejected even unchanged
            preflight: v1 demo/w1: rejected on create, accepted unchanged (ratcheting):
              spec.count: Invalid value: 4: spec.count in body should be ...
            preflight: v1 demo/w2: rejected even unchanged: spec.items[1]: Duplicate value: "a"
            preflight: 7 more (object, version) rejections not listed
        """
        texts: list[str] = []
        if self.worst:
            texts.append(
                f"{PREFIX}{len(self.worst)} of {self.objects} stored {self.kind} objects would "
                "be rejected on create by the new schema: "
                f"{self.count(Verdict.RATCHETS)} accepted unchanged (ratcheting), "
                f"{self.count(Verdict.REJECTED)} rejected even unchanged"
            )
        for finding in self.findings[:limit]:
            head = f"{PREFIX}{finding.version} {finding.object}: {VERDICT_TEXT[finding.verdict]}: "
            texts.append(head + _cut(finding.error, MAX_LINE - len(head)))
        if len(self.findings) > limit:
            more = len(self.findings) - limit
            texts.append(f"{PREFIX}{more} more (object, version) rejections not listed")
        if self.unchecked:
            texts.append(
                f"{PREFIX}{self.unchecked} stored {self.kind} objects not checked: the CRD "
                "converts with a webhook and they are stored in a version it does not serve"
            )
        return texts


@dataclass(frozen=True)
class _Version:
    """What checking an object in one served version needs."""

    name: str
    api_version: str
    serving: ResourceVersion
    strategy: CustomResourceStrategy

    def read(self, obj: Object) -> Object:
        """``obj`` as a read in this version answers it: converted and defaulted (not pruned)."""
        view = deep_copy(obj)
        view["apiVersion"] = self.api_version
        if self.serving.defaulter is not None:
            self.serving.defaulter(view)
        return view

    def decode(self, body: Object) -> Object:
        """``body`` as this version decodes it from a request: pruned, then defaulted."""
        decoded = deep_copy(body)
        if self.serving.pruner is not None:
            self.serving.pruner(decoded)
        if self.serving.defaulter is not None:
            self.serving.defaulter(decoded)
        return decoded

    def check(self, obj: Object) -> tuple[Verdict, list[str]]:
        """The verdict on ``obj`` and the errors behind it (none when accepted).

        The update is the one a client makes by sending back what it read: the
        old object is the read (fields the new schema no longer knows are still
        there), the new one is that read decoded from the request.
        """
        old = self.read(obj)
        try:
            new = self.decode(old)
        except StatusError as exc:  # metadata that no longer decodes
            return Verdict.REJECTED, [exc.message]
        created = deep_copy(new)
        self.strategy.prepare_for_create(created)
        create_errors = self.strategy.validate(created)
        update = self.strategy.check_update(new, old)
        if update.errors:
            return Verdict.REJECTED, [str(e) for e in update.errors]
        if create_errors:
            return Verdict.RATCHETS, [str(e) for e in create_errors]
        return Verdict.ACCEPTED, []


class _NoMetrics:
    """The report records no ratcheting figures: it is not a request's update."""

    def observe_ratcheting(self, seconds: float) -> None:
        return None

    def count_ratcheted(self, group: str, resource: str, source: str, count: int) -> None:
        return None


class Checker:
    """Checks stored objects against the served versions of a new CRD.

    ``crd`` must have been validated (as a dry-run update's object has been)
    and carry ``status.acceptedNames``.
    """

    def __init__(self, crd: Object, clients: WebhookClientManager, gates: FeatureGate) -> None:
        built = custom_resource(crd, clients, gates, _NoMetrics())
        resource = built.resource
        spec = crd["spec"]
        self.webhook = (spec.get("conversion") or {}).get("strategy") == "Webhook"
        self.versions = [
            _Version(
                name,
                f"{resource.group}/{name}",
                resource.versions[name],
                built.strategies[name],
            )
            for name in (v["name"] for v in spec["versions"] if v.get("served"))
        ]
        self.report = Report(resource.kind, [v.name for v in self.versions], self.webhook)

    def check(self, obj: Object) -> None:
        """Add ``obj``'s findings to :attr:`report`."""
        self.report.objects += 1
        metadata = obj.get("metadata") or {}
        name = str(metadata.get("name", ""))
        label = f"{metadata['namespace']}/{name}" if metadata.get("namespace") else name
        checked = False
        for version in self._versions_for(obj):
            checked = True
            verdict, errors = version.check(obj)
            if verdict is not Verdict.ACCEPTED:
                self.report.add(Finding(label, version.name, verdict, errors[0], len(errors)))
        if not checked:
            self.report.unchecked += 1

    def _versions_for(self, obj: Object) -> Iterator[_Version]:
        if not self.webhook:
            yield from self.versions
            return
        yield from (v for v in self.versions if v.api_version == obj.get("apiVersion"))


async def check_objects(
    crd: Object,
    objects: AsyncIterator[Object],
    clients: WebhookClientManager,
    gates: FeatureGate,
) -> Report:
    """The report on ``objects`` (as stored) under ``crd``, giving the event loop turns."""
    checker = Checker(crd, clients, gates)
    checks = 0
    async for obj in objects:
        checker.check(obj)
        checks += len(checker.versions)
        if checks >= CHUNK:
            checks = 0
            await pause()
    return checker.report


async def stored_objects(store: Store) -> AsyncIterator[Object]:
    """Every object of ``store``'s resource as stored: in the version it was written in,
    without read-time defaults, a page at a time at one revision."""
    prefix = store.resource.storage_prefix()
    revision, start = 0, None
    while True:
        page = await store.storage.list(prefix, revision=revision, start_key=start, limit=_PAGE)
        revision = page.revision
        for kv in page.kvs:
            yield orjson.loads(kv.value)
        if not page.more:
            return
        start = page.kvs[-1].key + "\x00"


#: The store serving a CRD's resource, ``None`` when it is not installed
#: (:meth:`~kapi.apiextensions.crd_stores.CustomResourceStores.store`).
StoreOf = Callable[[Object], Store | None]


class CRDPreflight:
    """A validating admission plugin: a dry-run CRD update gets the report as warnings.

    It acts on ``dryRun=All`` updates (PUT or PATCH) of a CRD's main resource
    that change its ``spec``; every other request passes untouched.  It never
    rejects: a dry run is answered as it would be without it, with the report's
    :meth:`Report.warnings` added.  The server hands it a way to find the
    store of a CRD's resource, the webhook clients and the feature gates.
    """

    def __init__(
        self, store_of: StoreOf, clients: WebhookClientManager, gates: FeatureGate
    ) -> None:
        self._store_of = store_of
        self._clients = clients
        self._gates = gates

    async def validate(self, attributes: Attributes) -> None:
        new, old = attributes.object, attributes.old_object
        if (
            not attributes.dry_run
            or attributes.operation is not Operation.UPDATE
            or attributes.subresource
            or attributes.resource.group != GROUP
            or attributes.resource.plural != "customresourcedefinitions"
            or new is None
            or old is None
            or new.get("spec") == old.get("spec")
        ):
            return
        store = self._store_of(old)
        if store is None:  # not established yet: nothing can be stored
            return
        request = current_request()
        try:
            report = await check_objects(new, stored_objects(store), self._clients, self._gates)
        except Exception as exc:  # the report is advice: it must not fail the dry run
            log.exception("pre-flight report of %s failed", attributes.name)
            request.add_warning(f"{PREFIX}the stored objects could not be checked: {exc}")
            return
        for text in report.warnings():
            request.add_warning(text)


def _cut(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters (at least 40), ``...`` when cut."""
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    limit = max(limit, 40)
    return text if len(text) <= limit else text[: limit - 3] + "..."
