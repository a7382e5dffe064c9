"""The generic store on a real SQLite storage: REST semantics without HTTP.

Each test builds stores as ``kapi serve`` does (``APIServer.start``): a scheme
of the built-in resources, one ``SQLiteStorage`` file, and ``Store(resource,
storage, scheme, admission)``; the admission chain holds only the plugins a
test gives it.  Errors are upstream's ``Status`` (code, reason, message), and
a refused write leaves what is stored exactly as it was.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kapi.admission.chain import AdmissionChain
from kapi.admission.interface import Attributes, Operation
from kapi.apimachinery import errors
from kapi.apimachinery.labels import parse_selector
from kapi.apis import builtin_resources
from kapi.registry.predicate import SelectionPredicate
from kapi.registry.store import Preconditions, Store
from kapi.runtime.objects import deep_copy
from kapi.runtime.scheme import Scheme
from kapi.storage.sqlite import SQLiteStorage
from kapi.version import DEFAULT_VERSION

Object = dict[str, Any]
Stores = Callable[[str, str], Store]

EVERYTHING = SelectionPredicate()
MODIFIED = (
    'Operation cannot be fulfilled on configmaps "x": the object has been modified; '
    "please apply your changes to the latest version and try again"
)


def run(tmp_path: Path, body: Callable[[Stores], Awaitable[Any]], *plugins: Any) -> Any:
    """Run ``body`` with a ``stores(group, plural)`` factory on a fresh SQLite file."""

    async def main() -> Any:
        scheme = Scheme(DEFAULT_VERSION)
        for resource in builtin_resources():
            scheme.add(resource)
        storage = SQLiteStorage(tmp_path / "kapi.db")
        admission = AdmissionChain(list(plugins))

        def stores(group: str, plural: str) -> Store:
            [resource] = [r for r in scheme.resources() if (r.group, r.plural) == (group, plural)]
            return Store(resource, storage, scheme, admission)

        try:
            return await body(stores)
        finally:
            await storage.close()

    return asyncio.run(main())


def configmap(name: str, namespace: str = "default", **data: str) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def pdb(name: str, min_available: int) -> Object:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": name}}},
    }


def to(obj: Object) -> Callable[[Object], Awaitable[Object]]:
    """An ``update`` function that replaces the stored object with ``obj``."""

    async def replace(_: Object) -> Object:
        return deep_copy(obj)

    return replace


def edit(change: Callable[[Object], None]) -> Callable[[Object], Awaitable[Object]]:
    """An ``update`` function that changes the stored object in place (read-modify-write)."""

    async def modify(current: Object) -> Object:
        change(current)
        return current

    return modify


def status_of(error: pytest.ExceptionInfo[errors.StatusError]) -> tuple[int, str, str]:
    return error.value.code, error.value.reason, error.value.message


def rv(obj: Object) -> int:
    return int(obj["metadata"]["resourceVersion"])


# -- create and get ------------------------------------------------------------------------


def test_create_sets_system_fields_and_get_reads_the_object_back(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[Object, Object]:
        store = stores("", "configmaps")
        created = await store.create(configmap("x", a="1"))
        return created, await store.get("default", "x")

    created, got = run(tmp_path, body)
    metadata = created["metadata"]
    assert set(metadata) == {"name", "namespace", "uid", "creationTimestamp", "resourceVersion"}
    assert len(metadata["uid"]) == 36
    assert metadata["creationTimestamp"].endswith("Z")
    assert rv(created) > 0
    assert "generation" not in metadata  # ConfigMaps have none
    assert got == created
    assert got["data"] == {"a": "1"}


def test_create_of_an_existing_name_is_already_exists_and_keeps_the_stored_one(
    tmp_path: Path,
) -> None:
    async def body(stores: Stores) -> tuple[Object, pytest.ExceptionInfo, Object]:
        store = stores("", "configmaps")
        first = await store.create(configmap("x", a="1"))
        with pytest.raises(errors.StatusError) as refused:
            await store.create(configmap("x", a="2"))
        return first, refused, await store.get("default", "x")

    first, refused, stored = run(tmp_path, body)
    assert status_of(refused) == (409, "AlreadyExists", 'configmaps "x" already exists')
    assert refused.value.details == {"name": "x", "kind": "configmaps"}
    assert stored == first


def test_the_same_name_in_another_namespace_is_another_object(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[Object, Object]:
        store = stores("", "configmaps")
        await store.create(configmap("x", "one", v="1"))
        await store.create(configmap("x", "two", v="2"))
        return await store.get("one", "x"), await store.get("two", "x")

    one, two = run(tmp_path, body)
    assert (one["data"], two["data"]) == ({"v": "1"}, {"v": "2"})
    assert one["metadata"]["uid"] != two["metadata"]["uid"]


def test_generate_name_gets_five_random_characters(tmp_path: Path) -> None:
    async def body(stores: Stores) -> Object:
        obj = configmap("")
        obj["metadata"] = {"generateName": "job-", "namespace": "default"}
        return await stores("", "configmaps").create(obj)

    name = run(tmp_path, body)["metadata"]["name"]
    assert name.startswith("job-") and len(name) == len("job-") + 5
    assert set(name[4:]) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_get_of_a_missing_object_is_not_found(tmp_path: Path) -> None:
    async def body(stores: Stores) -> pytest.ExceptionInfo:
        with pytest.raises(errors.StatusError) as missing:
            await stores("policy", "poddisruptionbudgets").get("default", "nope")
        return missing

    missing = run(tmp_path, body)
    assert status_of(missing) == (404, "NotFound", 'poddisruptionbudgets.policy "nope" not found')
    assert missing.value.details == {
        "name": "nope",
        "group": "policy",
        "kind": "poddisruptionbudgets",
    }


def test_an_invalid_create_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[pytest.ExceptionInfo, list[Object]]:
        store = stores("", "configmaps")
        with pytest.raises(errors.StatusError) as refused:
            await store.create(configmap("x", **{"bad key": "v"}))
        return refused, (await store.list("default", EVERYTHING)).items

    refused, items = run(tmp_path, body)
    code, reason, message = status_of(refused)
    assert (code, reason) == (422, "Invalid")
    assert message.startswith('ConfigMap "x" is invalid: data[bad key]: Invalid value: "bad key"')
    assert items == []


def test_dry_run_create_validates_but_stores_nothing(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[Object, pytest.ExceptionInfo, int]:
        store = stores("", "configmaps")
        before = await store.storage.current_revision()
        dry = await store.create(configmap("x", a="1"), dry_run=True)
        with pytest.raises(errors.StatusError) as missing:
            await store.get("default", "x")
        return dry, missing, await store.storage.current_revision() - before

    dry, missing, writes = run(tmp_path, body)
    assert dry["data"] == {"a": "1"}
    assert "resourceVersion" not in dry["metadata"]
    assert dry["metadata"]["uid"]
    assert missing.value.code == 404
    assert writes == 0


# -- update --------------------------------------------------------------------------------


def test_resource_versions_increase_with_every_write(tmp_path: Path) -> None:
    async def body(stores: Stores) -> list[int]:
        store = stores("", "configmaps")
        created = await store.create(configmap("x", v="1"))
        updated = await store.update("default", "x", edit(lambda o: o["data"].update(v="2")))
        other = await store.create(configmap("y"))
        deleted, gone = await store.delete("default", "x")
        assert gone
        listed = await store.list("default", EVERYTHING)
        return [rv(created), rv(updated), rv(other), rv(deleted), listed.resource_version]

    created, updated, other, deleted, listed = run(tmp_path, body)
    assert created < updated < other < deleted
    assert listed == deleted


def test_update_with_a_stale_resource_version_conflicts_and_changes_nothing(
    tmp_path: Path,
) -> None:
    async def body(stores: Stores) -> tuple[Object, Object, pytest.ExceptionInfo, Object]:
        store = stores("", "configmaps")
        first = await store.create(configmap("x", v="1"))
        second = await store.update("default", "x", edit(lambda o: o["data"].update(v="2")))
        stale = configmap("x", v="3")
        stale["metadata"]["resourceVersion"] = first["metadata"]["resourceVersion"]
        with pytest.raises(errors.StatusError) as conflict:
            await store.update("default", "x", to(stale))
        return first, second, conflict, await store.get("default", "x")

    first, second, conflict, stored = run(tmp_path, body)
    assert status_of(conflict) == (409, "Conflict", MODIFIED)
    assert stored == second
    assert stored["data"] == {"v": "2"}
    assert rv(first) < rv(stored)


def test_update_with_the_current_resource_version_is_written(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[Object, Object]:
        store = stores("", "configmaps")
        created = await store.create(configmap("x", v="1"))
        wanted = deep_copy(created)
        wanted["data"] = {"v": "2"}
        return created, await store.update("default", "x", to(wanted))

    created, updated = run(tmp_path, body)
    assert updated["data"] == {"v": "2"}
    assert rv(updated) > rv(created)
    assert updated["metadata"]["uid"] == created["metadata"]["uid"]
    assert updated["metadata"]["creationTimestamp"] == created["metadata"]["creationTimestamp"]


def test_an_update_that_changes_nothing_writes_nothing(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[Object, Object, int, int]:
        store = stores("", "configmaps")
        created = await store.create(configmap("x", v="1"))
        before = await store.storage.current_revision()
        same = await store.update("default", "x", edit(lambda o: None))
        return created, same, before, await store.storage.current_revision()

    created, same, before, after = run(tmp_path, body)
    assert same == created
    assert after == before


def test_an_invalid_update_is_refused_and_the_stored_object_stays(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[Object, pytest.ExceptionInfo, Object]:
        store = stores("", "configmaps")
        created = await store.create(configmap("x", v="1"))
        with pytest.raises(errors.StatusError) as refused:
            await store.update("default", "x", edit(lambda o: o["data"].update({"bad key": "v"})))
        return created, refused, await store.get("default", "x")

    created, refused, stored = run(tmp_path, body)
    assert (refused.value.code, refused.value.reason) == (422, "Invalid")
    assert stored == created


def test_update_of_a_missing_object_is_not_found(tmp_path: Path) -> None:
    async def body(stores: Stores) -> pytest.ExceptionInfo:
        with pytest.raises(errors.StatusError) as missing:
            await stores("", "configmaps").update("default", "x", to(configmap("x")))
        return missing

    assert status_of(run(tmp_path, body)) == (404, "NotFound", 'configmaps "x" not found')


def test_dry_run_update_answers_the_new_object_and_stores_nothing(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[Object, Object, Object]:
        store = stores("", "configmaps")
        created = await store.create(configmap("x", v="1"))
        dry = await store.update(
            "default", "x", edit(lambda o: o["data"].update(v="2")), dry_run=True
        )
        return created, dry, await store.get("default", "x")

    created, dry, stored = run(tmp_path, body)
    assert dry["data"] == {"v": "2"}
    assert stored == created


# -- generation ----------------------------------------------------------------------------


def test_generation_counts_spec_changes_only(tmp_path: Path) -> None:
    async def body(stores: Stores) -> list[tuple[int, int]]:
        store = stores("policy", "poddisruptionbudgets")
        seen = [await store.create(pdb("p", 1))]

        def spec(o: Object) -> None:
            o["spec"]["minAvailable"] = 2

        def label(o: Object) -> None:
            o["metadata"]["labels"] = {"team": "a"}

        def status(o: Object) -> None:
            o["status"]["expectedPods"] = 3

        seen.append(await store.update("default", "p", edit(spec)))
        seen.append(await store.update("default", "p", edit(label)))
        seen.append(await store.update("default", "p", edit(status), subresource="status"))
        return [(o["metadata"]["generation"], rv(o)) for o in seen]

    seen = run(tmp_path, body)
    assert [generation for generation, _ in seen] == [1, 2, 2, 2]
    revisions = [revision for _, revision in seen]
    assert revisions == sorted(set(revisions)), "every update was written"


def test_status_is_not_changed_through_the_main_resource(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[Object, Object]:
        store = stores("policy", "poddisruptionbudgets")
        created = await store.create(pdb("p", 1))

        def both(o: Object) -> None:
            o["spec"]["minAvailable"] = 2
            o["status"]["expectedPods"] = 9

        return created, await store.update("default", "p", edit(both))

    created, updated = run(tmp_path, body)
    assert updated["spec"]["minAvailable"] == 2
    assert updated["status"] == created["status"]
    assert created["status"] == {
        "disruptionsAllowed": 0,
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "expectedPods": 0,
    }


# -- delete and finalizers -----------------------------------------------------------------


def test_delete_removes_the_object(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[Object, Object, bool, pytest.ExceptionInfo]:
        store = stores("", "configmaps")
        created = await store.create(configmap("x", v="1"))
        deleted, gone = await store.delete("default", "x")
        with pytest.raises(errors.StatusError) as missing:
            await store.get("default", "x")
        return created, deleted, gone, missing

    created, deleted, gone, missing = run(tmp_path, body)
    assert gone is True
    assert deleted["metadata"]["uid"] == created["metadata"]["uid"]
    assert rv(deleted) > rv(created)
    assert missing.value.code == 404


def test_a_finalizer_holds_the_object_until_it_is_removed(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[Object, bool, Object, Object, bool, Object, Any]:
        store = stores("", "configmaps")
        held = configmap("x")
        held["metadata"]["finalizers"] = ["example.com/hold"]
        await store.create(held)
        marked, gone = await store.delete("default", "x")
        stored = await store.get("default", "x")
        again, gone_again = await store.delete("default", "x")
        released = await store.update(
            "default", "x", edit(lambda o: o["metadata"].pop("finalizers"))
        )
        with pytest.raises(errors.StatusError) as missing:
            await store.get("default", "x")
        return marked, gone, stored, again, gone_again, released, missing

    marked, gone, stored, again, gone_again, released, missing = run(tmp_path, body)
    assert gone is False
    assert marked["metadata"]["deletionTimestamp"].endswith("Z")
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 0
    assert stored == marked
    # A second delete of an object being deleted changes nothing.
    assert (again, gone_again) == (marked, False)
    # Removing the last finalizer of an object being deleted deletes it.
    assert rv(released) > rv(marked)
    assert missing.value.code == 404


def test_delete_preconditions_conflict_on_another_uid_or_resource_version(
    tmp_path: Path,
) -> None:
    async def body(stores: Stores) -> tuple[Object, Object, list[tuple[int, str, str]], Object]:
        store = stores("", "configmaps")
        stale = await store.create(configmap("x", v="1"))
        current = await store.update("default", "x", edit(lambda o: o["data"].update(v="2")))
        refusals = []
        for pre in (
            Preconditions(uid="00000000-0000-0000-0000-000000000000"),
            Preconditions(resource_version=stale["metadata"]["resourceVersion"]),
        ):
            with pytest.raises(errors.StatusError) as conflict:
                await store.delete("default", "x", preconditions=pre)
            refusals.append(status_of(conflict))
        return stale, current, refusals, await store.get("default", "x")

    stale, current, refusals, stored = run(tmp_path, body)
    prefix = 'Operation cannot be fulfilled on configmaps "x": Precondition failed: '
    assert refusals == [
        (
            409,
            "Conflict",
            prefix + "UID in precondition: 00000000-0000-0000-0000-000000000000, "
            f"UID in object meta: {current['metadata']['uid']}",
        ),
        (
            409,
            "Conflict",
            prefix + f"ResourceVersion in precondition: {stale['metadata']['resourceVersion']}, "
            f"ResourceVersion in object meta: {current['metadata']['resourceVersion']}",
        ),
    ]
    assert stored == current


def test_dry_run_delete_keeps_the_object(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[Object, bool, Object]:
        store = stores("", "configmaps")
        created = await store.create(configmap("x"))
        _, gone = await store.delete("default", "x", dry_run=True)
        return created, gone, await store.get("default", "x")

    created, gone, stored = run(tmp_path, body)
    assert gone is True  # what a real delete would do
    assert stored == created


# -- list ----------------------------------------------------------------------------------


def test_list_is_scoped_to_the_namespace_and_filtered_by_labels(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[list[str], list[str], list[str]]:
        store = stores("", "configmaps")
        for name, namespace, app in (("a", "one", "web"), ("b", "one", "db"), ("c", "two", "web")):
            obj = configmap(name, namespace)
            obj["metadata"]["labels"] = {"app": app}
            await store.create(obj)
        web = SelectionPredicate(label=parse_selector("app=web"))

        def names(items: list[Object]) -> list[str]:
            return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in items]

        return (
            names((await store.list("one", EVERYTHING)).items),
            names((await store.list(None, web)).items),
            names((await store.list("two", web)).items),
        )

    one, web_everywhere, web_in_two = run(tmp_path, body)
    assert one == ["one/a", "one/b"]
    assert web_everywhere == ["one/a", "two/c"]
    assert web_in_two == ["two/c"]


def test_pages_of_a_list_are_one_snapshot(tmp_path: Path) -> None:
    async def body(stores: Stores) -> list[tuple[list[str], int, bool, int | None]]:
        store = stores("", "configmaps")
        for name in ("a", "b", "c", "d", "e"):
            await store.create(configmap(name, v="old"))
        pages = []
        page = await store.list("default", EVERYTHING, limit=2)
        # Writes after the first page do not show in the next ones.
        await store.update("default", "c", edit(lambda o: o["data"].update(v="new")))
        await store.create(configmap("bb"))
        while True:
            pages.append(
                (
                    [f"{o['metadata']['name']}={o['data'].get('v')}" for o in page.items],
                    page.resource_version,
                    bool(page.continue_token),
                    page.remaining,
                )
            )
            if not page.continue_token:
                return pages
            page = await store.list(
                "default", EVERYTHING, limit=2, continue_token=page.continue_token
            )

    pages = run(tmp_path, body)
    assert [names for names, *_ in pages] == [["a=old", "b=old"], ["c=old", "d=old"], ["e=old"]]
    assert len({revision for _, revision, *_ in pages}) == 1
    assert [(more, remaining) for _, _, more, remaining in pages] == [
        (True, 3),
        (True, 1),
        (False, None),
    ]


def test_list_at_an_exact_old_revision_shows_the_old_state(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[Object, list[Object], int]:
        store = stores("", "configmaps")
        old = await store.create(configmap("x", v="1"))
        await store.update("default", "x", edit(lambda o: o["data"].update(v="2")))
        listed = await store.list(
            "default",
            EVERYTHING,
            resource_version=old["metadata"]["resourceVersion"],
            resource_version_match="Exact",
        )
        return old, listed.items, listed.resource_version

    old, items, revision = run(tmp_path, body)
    assert items == [old]
    assert revision == rv(old)


def test_list_at_a_future_revision_is_too_large(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[int, pytest.ExceptionInfo]:
        store = stores("", "configmaps")
        current = rv(await store.create(configmap("x")))
        with pytest.raises(errors.StatusError) as future:
            await store.list("default", EVERYTHING, resource_version=str(current + 10))
        return current, future

    current, future = run(tmp_path, body)
    assert status_of(future) == (
        504,
        "Timeout",
        f"Too large resource version: {current + 10}, current: {current}",
    )
    assert future.value.details == {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    }


# -- admission -----------------------------------------------------------------------------


class Recorder:
    """A mutating and validating plugin: records what it sees, labels what it admits."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Operation, str | None, str, bool]] = []

    async def admit(self, attributes: Attributes) -> None:
        self.seen.append(("admit", *self._key(attributes)))
        if attributes.object is not None:
            attributes.object["metadata"].setdefault("labels", {})["admitted"] = "yes"

    async def validate(self, attributes: Attributes) -> None:
        self.seen.append(("validate", *self._key(attributes)))

    @staticmethod
    def _key(attributes: Attributes) -> tuple[Operation, str | None, str, bool]:
        return attributes.operation, attributes.namespace, attributes.name, attributes.dry_run


class Refuser:
    """A validating plugin that refuses every write, as a denying webhook does."""

    async def validate(self, attributes: Attributes) -> None:
        raise errors.StatusError(403, "Forbidden", "refused by policy")


def test_admission_sees_each_write_and_its_mutation_is_stored(tmp_path: Path) -> None:
    recorder = Recorder()

    async def body(stores: Stores) -> Object:
        store = stores("", "configmaps")
        await store.create(configmap("x", v="1"))
        await store.update("default", "x", edit(lambda o: o["data"].update(v="2")), dry_run=True)
        await store.delete("default", "x", dry_run=True)
        return await store.get("default", "x")

    stored = run(tmp_path, body, recorder)
    assert stored["metadata"]["labels"] == {"admitted": "yes"}
    assert recorder.seen == [
        ("admit", Operation.CREATE, "default", "x", False),
        ("validate", Operation.CREATE, "default", "x", False),
        ("admit", Operation.UPDATE, "default", "x", True),
        ("validate", Operation.UPDATE, "default", "x", True),
        ("admit", Operation.DELETE, "default", "x", True),
        ("validate", Operation.DELETE, "default", "x", True),
    ]


def test_a_refusal_in_admission_stores_nothing(tmp_path: Path) -> None:
    async def body(stores: Stores) -> tuple[pytest.ExceptionInfo, list[Object], int]:
        store = stores("", "configmaps")
        before = await store.storage.current_revision()
        with pytest.raises(errors.StatusError) as refused:
            await store.create(configmap("x"))
        listed = await store.list("default", EVERYTHING)
        return refused, listed.items, listed.resource_version - before

    refused, items, writes = run(tmp_path, body, Refuser())
    assert status_of(refused) == (403, "Forbidden", "refused by policy")
    assert items == []
    assert writes == 0
