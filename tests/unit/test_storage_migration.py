"""The storage migration algorithm (:mod:`kapi.storageversion.migration`) against a fake
backend: refusal without a common encoding version, paging and resuming from the
annotation, abort when the StorageVersion changes or its common version empties,
conflicts and deletions counted, and a CRD's storedVersions trimmed."""

from __future__ import annotations

import asyncio
import copy
import io
from collections.abc import Callable
from typing import Any

import pytest

from kapi.storageversion.migration import (
    CONTINUE_ANNOTATION,
    MIGRATED_ANNOTATION,
    STORAGE_VERSION_RV_ANNOTATION,
    ConflictRetry,
    ContinueExpired,
    MigrationError,
    Outcome,
    Page,
    Progress,
    find_condition,
    run_migration,
)

Object = dict[str, Any]


def _sv(name: str, common: str | None, rv: int = 5) -> Object:
    status: Object = {}
    if common is not None:
        status["commonEncodingVersion"] = common
    return {"metadata": {"name": name, "resourceVersion": str(rv)}, "status": status}


class FakeBackend:
    """Objects of one resource in memory; hooks let a test change the world mid-run."""

    def __init__(self, group: str, resource: str, count: int, common: str | None) -> None:
        self.migration: Object = {
            "metadata": {"name": "m", "resourceVersion": "1", "annotations": {}},
            "spec": {"resource": {"group": group, "resource": resource}},
            "status": {},
        }
        sv_name = f"{group or 'core'}.{resource}"
        self.storage_versions: dict[str, Object] = {sv_name: _sv(sv_name, common)}
        self.objects = [
            {"metadata": {"name": f"o{i:03}", "resourceVersion": str(100 + i)}}
            for i in range(count)
        ]
        self.rewritten: list[str] = []
        self.outcomes: dict[str, Outcome] = {}
        self.crds: dict[str, Object] = {}
        self.status_writes: list[Object] = []
        self.after_page: Callable[[int], None] | None = None
        self.pages = 0
        self.expire_token: str | None = None
        self.crd_conflicts = 0

    async def get_migration(self, name: str) -> Object:
        return copy.deepcopy(self.migration)

    async def update_migration(self, migration: Object) -> Object:
        # The main resource keeps the status (it is written through /status only).
        kept = copy.deepcopy(self.migration["status"])
        self.migration = copy.deepcopy(migration)
        self.migration["status"] = kept
        return copy.deepcopy(self.migration)

    async def update_migration_status(self, migration: Object) -> Object:
        self.migration["status"] = copy.deepcopy(migration["status"])
        self.status_writes.append(copy.deepcopy(migration["status"]))
        return copy.deepcopy(self.migration)

    async def get_storage_version(self, name: str) -> Object | None:
        found = self.storage_versions.get(name)
        return copy.deepcopy(found) if found is not None else None

    async def list_page(self, group: str, resource: str, limit: int, continue_token: str) -> Page:
        if self.expire_token is not None and continue_token == self.expire_token:
            self.expire_token = None
            raise ContinueExpired("too old")
        start = int(continue_token) if continue_token else 0
        items = self.objects[start : start + limit]
        end = start + len(items)
        more = end < len(self.objects)
        self.pages += 1
        if self.after_page is not None:
            self.after_page(self.pages)
        return Page(
            copy.deepcopy(items),
            str(end) if more else "",
            "999",
            len(self.objects) - end if more else None,
        )

    async def rewrite(self, group: str, resource: str, obj: Object) -> Outcome:
        name = obj["metadata"]["name"]
        outcome = self.outcomes.get(name, "rewritten")
        if outcome == "rewritten":
            self.rewritten.append(name)
        return outcome

    async def get_crd(self, name: str) -> Object | None:
        found = self.crds.get(name)
        return copy.deepcopy(found) if found is not None else None

    async def update_crd_status(self, crd: Object) -> Object:
        if self.crd_conflicts:
            self.crd_conflicts -= 1
            raise ConflictRetry("conflict")
        self.crds[crd["metadata"]["name"]] = copy.deepcopy(crd)
        return crd


def _run(backend: FakeBackend, **kwargs: Any) -> Object:
    return asyncio.run(run_migration(backend, "m", **kwargs))


def _condition(obj: Object, condition_type: str) -> Object:
    condition = find_condition(obj, condition_type)
    assert condition is not None, obj
    return condition


def test_refused_without_a_common_encoding_version() -> None:
    backend = FakeBackend("policy", "poddisruptionbudgets", 3, common=None)
    with pytest.raises(MigrationError) as raised:
        _run(backend)
    expected = (
        "the API servers do not agree on the version they store poddisruptionbudgets.policy "
        "in: StorageVersion policy.poddisruptionbudgets has no commonEncodingVersion"
    )
    assert raised.value.message == expected
    assert backend.rewritten == [] and backend.pages == 0
    failed = _condition(backend.migration, "Failed")
    assert (failed["status"], failed["reason"], failed["message"]) == (
        "True",
        "StorageVersionMigrationFailed",
        expected,
    )
    # status.resourceVersion must be well formed once status is written.
    assert backend.migration["status"]["resourceVersion"] == "1"


def test_refused_without_a_storage_version() -> None:
    backend = FakeBackend("", "configmaps", 3, common="v1")
    backend.storage_versions.clear()
    with pytest.raises(MigrationError) as raised:
        _run(backend)
    assert raised.value.cause == "StorageVersionNotFound"
    assert raised.value.message == (
        "there is no StorageVersion core.configmaps: no API server has reported how it "
        "stores configmaps"
    )
    assert backend.rewritten == []


def test_pages_through_every_object_and_records_progress() -> None:
    backend = FakeBackend("", "configmaps", 7, common="v1")
    seen: list[Progress] = []
    final = _run(backend, page_size=3, on_progress=lambda p: seen.append(copy.copy(p)))
    assert backend.rewritten == [f"o{i:03}" for i in range(7)]
    assert backend.pages == 3
    # Progress after each of the two pages that had more, in the Running condition.
    running_messages = [
        next(c["message"] for c in status["conditions"] if c["type"] == "Running")
        for status in backend.status_writes[:2]
    ]
    assert running_messages == ["migrated 3 of about 7 objects", "migrated 6 of about 7 objects"]
    assert [(p.migrated, p.about, p.done) for p in seen] == [
        (3, 7, False),
        (6, 7, False),
        (7, 7, True),
    ]
    succeeded = _condition(final, "Succeeded")
    assert (succeeded["status"], succeeded["reason"]) == (
        "True",
        "StorageVersionMigrationSucceeded",
    )
    assert succeeded["message"] == (
        "migrated 7 objects of configmaps to v1 (0 changed and 0 deleted meanwhile)"
    )
    running = _condition(final, "Running")
    assert running["status"] == "False"
    assert final["status"]["resourceVersion"] == "999"
    annotations = final["metadata"]["annotations"]
    assert CONTINUE_ANNOTATION not in annotations
    assert annotations[STORAGE_VERSION_RV_ANNOTATION] == "5"


def test_the_continue_token_is_kept_in_an_annotation_after_each_page() -> None:
    backend = FakeBackend("", "configmaps", 7, common="v1")
    tokens: list[str | None] = []

    def look(page: int) -> None:
        tokens.append(backend.migration["metadata"]["annotations"].get(CONTINUE_ANNOTATION))

    backend.after_page = look
    _run(backend, page_size=3)
    # Read while listing page n: the token saved after page n-1.
    assert tokens == [None, "3", "6"]


def test_a_restarted_run_resumes_from_the_annotation() -> None:
    backend = FakeBackend("", "configmaps", 7, common="v1")
    backend.migration["metadata"]["annotations"] = {
        CONTINUE_ANNOTATION: "6",
        STORAGE_VERSION_RV_ANNOTATION: "5",
        MIGRATED_ANNOTATION: "6",
    }
    final = _run(backend, page_size=3)
    assert backend.rewritten == ["o006"]
    assert backend.pages == 1
    assert _condition(final, "Succeeded")["message"].startswith("migrated 7 objects")


def test_an_expired_continue_token_starts_over() -> None:
    backend = FakeBackend("", "configmaps", 4, common="v1")
    backend.migration["metadata"]["annotations"] = {
        CONTINUE_ANNOTATION: "3",
        STORAGE_VERSION_RV_ANNOTATION: "5",
        MIGRATED_ANNOTATION: "3",
    }
    backend.expire_token = "3"
    final = _run(backend, page_size=10)
    assert backend.rewritten == ["o000", "o001", "o002", "o003"]
    assert _condition(final, "Succeeded")["status"] == "True"


def test_a_resumed_run_aborts_when_the_storage_version_moved_on() -> None:
    backend = FakeBackend("", "configmaps", 7, common="v1")
    backend.migration["metadata"]["annotations"] = {
        CONTINUE_ANNOTATION: "3",
        STORAGE_VERSION_RV_ANNOTATION: "4",
    }
    with pytest.raises(MigrationError) as raised:
        _run(backend, page_size=3)
    assert raised.value.cause == "StorageVersionChanged"
    assert backend.rewritten == []


def test_aborts_when_the_storage_version_changes_mid_run() -> None:
    backend = FakeBackend("policy", "poddisruptionbudgets", 7, common="policy/v1")

    def change(page: int) -> None:
        if page == 2:
            backend.storage_versions["policy.poddisruptionbudgets"] = _sv(
                "policy.poddisruptionbudgets", "policy/v1", rv=8
            )

    backend.after_page = change
    with pytest.raises(MigrationError) as raised:
        _run(backend, page_size=3)
    expected = (
        "aborted: the storage version of poddisruptionbudgets.policy changed while migrating "
        "(StorageVersion policy.poddisruptionbudgets resourceVersion 5, now 8)"
    )
    assert raised.value.message == expected
    assert backend.pages == 2
    failed = _condition(backend.migration, "Failed")
    assert (failed["status"], failed["reason"], failed["message"]) == (
        "True",
        "StorageVersionMigrationFailed",
        expected,
    )
    running = _condition(backend.migration, "Running")
    assert running["status"] == "False"
    assert find_condition(backend.migration, "Succeeded") is None


def test_aborts_when_the_common_encoding_version_empties_mid_run() -> None:
    backend = FakeBackend("policy", "poddisruptionbudgets", 7, common="policy/v1")

    def empty(page: int) -> None:
        backend.storage_versions["policy.poddisruptionbudgets"] = _sv(
            "policy.poddisruptionbudgets", None, rv=9
        )

    backend.after_page = empty
    with pytest.raises(MigrationError) as raised:
        _run(backend, page_size=3)
    assert raised.value.cause == "CommonEncodingVersionUnset"
    assert raised.value.message == (
        "aborted: the common encoding version of poddisruptionbudgets.policy was unset while "
        "migrating (StorageVersion policy.poddisruptionbudgets)"
    )
    assert backend.pages == 1
    assert _condition(backend.migration, "Failed")["status"] == "True"


def test_conflicts_and_deletions_are_counted_and_the_run_goes_on() -> None:
    backend = FakeBackend("", "configmaps", 5, common="v1")
    backend.outcomes = {"o001": "conflict", "o003": "gone", "o004": "conflict"}
    final = _run(backend, page_size=2)
    assert backend.rewritten == ["o000", "o002"]
    assert _condition(final, "Succeeded")["message"] == (
        "migrated 2 objects of configmaps to v1 (2 changed and 1 deleted meanwhile)"
    )


def test_a_custom_resource_has_its_stored_versions_trimmed() -> None:
    backend = FakeBackend("example.com", "widgets", 2, common="example.com/v2")
    backend.crds["widgets.example.com"] = {
        "metadata": {"name": "widgets.example.com"},
        "status": {"storedVersions": ["v1", "v2"]},
    }
    backend.crd_conflicts = 1  # the first write conflicts: read again and retry
    _run(backend)
    assert backend.crds["widgets.example.com"]["status"]["storedVersions"] == ["v2"]


def test_a_built_in_resource_touches_no_crd() -> None:
    backend = FakeBackend("policy", "poddisruptionbudgets", 1, common="policy/v1")
    _run(backend)
    assert backend.crds == {}


def test_a_finished_migration_is_left_alone() -> None:
    backend = FakeBackend("", "configmaps", 3, common="v1")
    backend.migration["status"] = {
        "resourceVersion": "2",
        "conditions": [
            {
                "type": "Succeeded",
                "status": "True",
                "reason": "Completed",
                "message": "done",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
    }
    _run(backend)
    assert backend.rewritten == [] and backend.status_writes == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_a_bar_on_a_terminal_and_lines_elsewhere() -> None:
    from kapi.cli.commands.migrate import ProgressView

    tty = _Terminal()
    view = ProgressView(tty, "widgets.example.com")
    view(Progress(migrated=3, about=12))
    view(Progress(migrated=12, about=12, done=True))
    assert tty.getvalue() == (
        "\rwidgets.example.com: [#######-----------------------] migrated 3 of about 12 objects"
        "\x1b[K"
        "\rwidgets.example.com: [##############################] migrated 12 of about 12 objects"
        "\x1b[K\n"
    )
    plain = io.StringIO()
    view = ProgressView(plain, "configmaps")
    view(Progress(migrated=3))
    assert plain.getvalue() == "configmaps: migrated 3 objects\n"


def test_a_one_page_run_is_running_then_succeeded_as_a_longer_one() -> None:
    backend = FakeBackend("", "configmaps", 2, common="v1")
    final = _run(backend, page_size=10)
    first = next(c for c in backend.status_writes[0]["conditions"] if c["type"] == "Running")
    assert (first["status"], first["message"]) == ("True", "migrated 2 of about 2 objects")
    assert backend.status_writes[0]["resourceVersion"]
    running, succeeded = _condition(final, "Running"), _condition(final, "Succeeded")
    assert running is not None and running["status"] == "False"
    assert succeeded is not None and succeeded["status"] == "True"
