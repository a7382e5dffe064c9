"""The real kubectl binaries against a real ``kapi serve``.

Every test drives a released kubectl through a subprocess and checks its exit
code and the exact lines it prints, as kubectl prints them against
kube-apiserver. Objects are created from files (``create -f``); the generator
commands are in ``test_kubectl_protobuf.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.conftest import KapiServer
from tests.helpers.kubectl import (
    DEFAULT_VERSION,
    INVALID_NAME_MESSAGE,
    TIMESTAMP,
    UID,
    Kubectl,
    Result,
    configmap,
    make_kubectl,
    table,
)
from tests.helpers.wait import eventually

pytestmark = pytest.mark.kubectl

AGE = r"\d+s"


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], str]:
    """Write a manifest into the test's directory and return its path."""

    def write(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


def namespace_manifest(name: str) -> str:
    return f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n"


def assert_table(lines: list[str], expected: list[str]) -> None:
    """Table lines equal ``expected`` where a trailing ``<age>`` stands for an AGE cell."""
    assert len(lines) == len(expected), "\n".join(lines)
    for line, want in zip(lines, expected, strict=True):
        if want.endswith("<age>"):
            pattern = re.escape(want.removesuffix("<age>")) + AGE
            assert re.fullmatch(pattern, line), f"{line!r} does not match {want!r}"
        else:
            assert line == want


# --- the core flow across kubectl releases ---------------------------------------------------


@pytest.mark.parametrize("version", ["1.27", "1.30", "1.33"])
def test_core_flow_across_versions(
    kapi_server: KapiServer, namespace: str, tmp_path: Path, write, version: str
) -> None:
    k = make_kubectl(kapi_server, tmp_path, version)
    ns = ("-n", namespace)
    path = write("cm.yaml", configmap("x"))
    # kubectl < 1.29 validates against the protobuf /openapi/v2 document first.
    assert k.ok(*ns, "create", "-f", path).out_lines == ["configmap/x created"]
    assert k.ok(*ns, "get", "configmap", "x", "-o", "name").out_lines == ["configmap/x"]
    assert_table(
        k.ok(*ns, "get", "configmaps").out_lines, ["NAME   DATA   AGE", "x      1      <age>"]
    )
    patched = k.ok(*ns, "patch", "configmap", "x", "--type=merge", "-p", '{"data":{"b":"2"}}')
    assert patched.out_lines == ["configmap/x patched"]
    assert k.json(*ns, "get", "configmap", "x")["data"] == {"a": "1", "b": "2"}
    assert k.ok(*ns, "delete", "configmap", "x").out_lines == ['configmap "x" deleted']
    missing = k.fails(*ns, "get", "configmap", "x")
    assert missing.err_lines == ['Error from server (NotFound): configmaps "x" not found']


# --- create and get -------------------------------------------------------------------------


def test_create_and_get_output_formats(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    path = write("cm.yaml", configmap("x", {"a": "1"}, env="prod"))
    assert kubectl.ok(*ns, "create", "-f", path).out_lines == ["configmap/x created"]

    as_json = kubectl.json(*ns, "get", "configmap", "x")
    assert as_json["apiVersion"] == "v1"
    assert as_json["kind"] == "ConfigMap"
    assert as_json["data"] == {"a": "1"}
    meta = as_json["metadata"]
    assert set(meta) == {
        "creationTimestamp",
        "labels",
        "name",
        "namespace",
        "resourceVersion",
        "uid",
    }
    assert meta["name"] == "x"
    assert meta["namespace"] == namespace
    assert meta["labels"] == {"env": "prod"}
    assert isinstance(meta["resourceVersion"], str) and meta["resourceVersion"].isdigit()
    assert UID.fullmatch(meta["uid"]), meta["uid"]
    assert TIMESTAMP.fullmatch(meta["creationTimestamp"]), meta["creationTimestamp"]

    as_yaml = kubectl.ok(*ns, "get", "configmap", "x", "-o", "yaml").stdout
    assert yaml.safe_load(as_yaml) == as_json
    assert as_yaml == (
        "apiVersion: v1\n"
        "data:\n"
        '  a: "1"\n'
        "kind: ConfigMap\n"
        "metadata:\n"
        f'  creationTimestamp: "{meta["creationTimestamp"]}"\n'
        "  labels:\n"
        "    env: prod\n"
        "  name: x\n"
        f"  namespace: {namespace}\n"
        f'  resourceVersion: "{meta["resourceVersion"]}"\n'
        f"  uid: {meta['uid']}\n"
    )

    assert kubectl.ok(*ns, "get", "cm", "x", "-o", "name").out_lines == ["configmap/x"]
    jsonpath = kubectl.ok(*ns, "get", "cm", "x", "-o", "jsonpath={.metadata.uid}")
    assert jsonpath.stdout == meta["uid"]
    assert_table(
        kubectl.ok(*ns, "get", "cm").out_lines, ["NAME   DATA   AGE", "x      1      <age>"]
    )
    labelled = kubectl.ok(*ns, "get", "cm", "x", "--show-labels").out_lines
    assert labelled[0] == "NAME   DATA   AGE   LABELS"
    assert re.fullmatch(r"x      1      \d+s\s+env=prod", labelled[1]), labelled


def test_create_multi_object_file(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    path = write(
        "multi.yaml",
        configmap("m1", {"k": "v"})
        + "---\n"
        + "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s1\ndata:\n  x: aGVsbG8=\n",
    )
    created = kubectl.ok(*ns, "create", "-f", path)
    assert created.out_lines == ["configmap/m1 created", "secret/s1 created"]
    names = kubectl.ok(*ns, "get", "configmaps,secrets", "-o", "name")
    assert names.out_lines == ["configmap/m1", "secret/s1"]
    assert_table(
        kubectl.ok(*ns, "get", "secrets").out_lines,
        ["NAME   TYPE     DATA   AGE", "s1     Opaque   1      <age>"],
    )


def test_get_with_label_selector(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    manifests = [
        configmap("p1", env="prod"),
        configmap("p2", env="prod", tier="web"),
        configmap("s1", env="staging"),
        configmap("none"),
    ]
    kubectl.ok(*ns, "create", "-f", write("cms.yaml", "---\n".join(manifests)))

    def names(selector: str) -> list[str]:
        return kubectl.ok(*ns, "get", "cm", "-l", selector, "-o", "name").out_lines

    assert names("env=prod") == ["configmap/p1", "configmap/p2"]
    assert names("env!=prod") == ["configmap/none", "configmap/s1"]
    assert names("env in (prod,staging)") == ["configmap/p1", "configmap/p2", "configmap/s1"]
    assert names("!env") == ["configmap/none"]
    assert names("env=prod,tier=web") == ["configmap/p2"]
    assert_table(
        kubectl.ok(*ns, "get", "cm", "-l", "env=prod").out_lines,
        ["NAME   DATA   AGE", "p1     1      <age>", "p2     1      <age>"],
    )
    nothing = kubectl.run(*ns, "get", "cm", "-l", "env=qa")
    assert nothing.returncode == 0, str(nothing)
    assert nothing.stdout == ""
    assert nothing.err_lines == [f"No resources found in {namespace} namespace."]


def test_get_all_namespaces(kubectl: Kubectl, namespace: str, write) -> None:
    other = f"{namespace}-b"
    assert kubectl.ok("create", "-f", write("ns.yaml", namespace_manifest(other))).out_lines == [
        f"namespace/{other} created"
    ]
    mark = namespace.replace("-", "")
    kubectl.ok("-n", namespace, "create", "-f", write("a.yaml", configmap("a", run=mark)))
    kubectl.ok("-n", other, "create", "-f", write("b.yaml", configmap("b", {}, run=mark)))

    # Like kube-apiserver (etcd and the watch cache), lists come in storage-key order,
    # "/registry/configmaps/<namespace>/<name>": "<ns>-b/b" sorts before "<ns>/a" ('-' < '/').
    expected_rows = sorted(
        [(namespace, "a", "1"), (other, "b", "0")], key=lambda r: f"{r[0]}/{r[1]}"
    )
    assert expected_rows[0][0] == other
    result = kubectl.ok("get", "cm", "-A", "-l", f"run={mark}")
    expected = table(
        [["NAMESPACE", "NAME", "DATA", "AGE"], *[[*row, "<age>"] for row in expected_rows]]
    )
    assert_table(result.out_lines, expected)
    names = kubectl.ok("get", "cm", "--all-namespaces", "-l", f"run={mark}", "-o", "name")
    assert names.out_lines == [f"configmap/{row[1]}" for row in expected_rows]
    items = kubectl.json("get", "cm", "-A", "-l", f"run={mark}")["items"]
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items] == [
        row[:2] for row in expected_rows
    ]


# --- watch ----------------------------------------------------------------------------------


def test_watch_json_sees_patch(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    kubectl.ok(*ns, "create", "-f", write("cm.yaml", configmap("x")))
    with kubectl.watch(*ns, "get", "cm", "x", "-w", "-o", "json") as watch:
        watch.wait_for(lambda _: len(watch.objects()) >= 1, "the initial object")
        first = watch.objects()[0]
        assert first["data"] == {"a": "1"}
        kubectl.ok(*ns, "patch", "cm", "x", "--type=merge", "-p", '{"data":{"b":"2"}}')
        watch.wait_for(
            lambda _: any(o["data"].get("b") == "2" for o in watch.objects()), "the patched object"
        )
        updated = watch.objects()[-1]
    assert updated["data"] == {"a": "1", "b": "2"}
    assert updated["metadata"]["uid"] == first["metadata"]["uid"]
    assert int(updated["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])


def test_watch_events_added_modified_deleted(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    kubectl.ok(*ns, "create", "-f", write("cm.yaml", configmap("x")))
    args = (*ns, "get", "cm", "x", "-w", "--output-watch-events", "-o", "json")
    with kubectl.watch(*args) as watch:
        watch.wait_for(lambda _: len(watch.objects()) >= 1, "the ADDED event")
        kubectl.ok(*ns, "patch", "cm", "x", "--type=merge", "-p", '{"data":{"a":"2"}}')
        watch.wait_for(lambda _: len(watch.objects()) >= 2, "the MODIFIED event")
        kubectl.ok(*ns, "delete", "cm", "x")
        watch.wait_for(lambda _: len(watch.objects()) >= 3, "the DELETED event")
        events = watch.objects()
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    assert [e["object"]["data"]["a"] for e in events] == ["1", "2", "2"]
    assert {e["object"]["metadata"]["name"] for e in events} == {"x"}


def test_watch_table_output(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    kubectl.ok(*ns, "create", "-f", write("cm.yaml", configmap("x")))
    with (
        kubectl.watch(*ns, "get", "cm", "x", "-w") as plain,
        kubectl.watch(*ns, "get", "cm", "-w", "--output-watch-events") as events,
        kubectl.watch(*ns, "get", "cm", "x", "-w", "-o", "name") as names,
    ):
        plain.wait_for(lambda lines: len(lines) >= 2, "the initial row")
        events.wait_for(lambda lines: len(lines) >= 2, "the initial event")
        names.wait_for(lambda lines: len(lines) >= 1, "the initial name")
        kubectl.ok(*ns, "patch", "cm", "x", "--type=merge", "-p", '{"data":{"b":"2"}}')
        plain.wait_for(lambda lines: len(lines) >= 3, "the updated row")
        events.wait_for(lambda lines: len(lines) >= 3, "the MODIFIED event")
        names.wait_for(lambda lines: len(lines) >= 2, "the second name")
    assert_table(plain.lines, ["NAME   DATA   AGE", "x      1      <age>", "x      2      <age>"])
    assert_table(
        events.lines,
        [
            "EVENT      NAME   DATA   AGE",
            "ADDED      x      1      <age>",
            "MODIFIED   x      2      <age>",
        ],
    )
    assert names.lines == ["configmap/x", "configmap/x"]


# --- patch, replace, delete, label, annotate ------------------------------------------------


def test_patch_merge_and_json(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    kubectl.ok(*ns, "create", "-f", write("cm.yaml", configmap("x", {"a": "1", "b": "2"})))
    before = kubectl.json(*ns, "get", "cm", "x")

    merge = kubectl.ok(*ns, "patch", "cm", "x", "--type=merge", "-p", '{"data":{"a":null,"c":"3"}}')
    assert merge.out_lines == ["configmap/x patched"]
    after_merge = kubectl.json(*ns, "get", "cm", "x")
    assert after_merge["data"] == {"b": "2", "c": "3"}
    assert int(after_merge["metadata"]["resourceVersion"]) > int(
        before["metadata"]["resourceVersion"]
    )

    ops = json.dumps(
        [
            {"op": "test", "path": "/data/b", "value": "2"},
            {"op": "replace", "path": "/data/b", "value": "two"},
            {"op": "remove", "path": "/data/c"},
            {"op": "add", "path": "/metadata/labels", "value": {"env": "prod"}},
        ]
    )
    assert kubectl.ok(*ns, "patch", "cm", "x", "--type=json", "-p", ops).out_lines == [
        "configmap/x patched"
    ]
    after_json = kubectl.json(*ns, "get", "cm", "x")
    assert after_json["data"] == {"b": "two"}
    assert after_json["metadata"]["labels"] == {"env": "prod"}
    assert after_json["metadata"]["uid"] == before["metadata"]["uid"]

    strategic = kubectl.ok(*ns, "patch", "cm", "x", "-p", '{"data":{"d":"4"}}')
    assert strategic.out_lines == ["configmap/x patched"]
    assert kubectl.json(*ns, "get", "cm", "x")["data"] == {"b": "two", "d": "4"}

    same = kubectl.ok(*ns, "patch", "cm", "x", "--type=merge", "-p", '{"data":{"d":"4"}}')
    assert same.out_lines == ["configmap/x patched (no change)"]

    # Emptied, the map is gone from the object, as ConfigMap.data is omitempty upstream.
    emptied = kubectl.ok(
        *ns, "patch", "cm", "x", "--type=merge", "-p", '{"data":{"b":null,"d":null}}'
    )
    assert emptied.out_lines == ["configmap/x patched"]
    assert "data" not in kubectl.json(*ns, "get", "cm", "x")


def test_replace_after_editing_file(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    path = write("cm.yaml", configmap("x", {"a": "1"}))
    created = kubectl.json(*ns, "create", "-f", path)
    write("cm.yaml", configmap("x", {"a": "edited", "new": "yes"}))
    assert kubectl.ok(*ns, "replace", "-f", path).out_lines == ["configmap/x replaced"]
    replaced = kubectl.json(*ns, "get", "cm", "x")
    assert replaced["data"] == {"a": "edited", "new": "yes"}
    assert replaced["metadata"]["uid"] == created["metadata"]["uid"]
    assert replaced["metadata"]["creationTimestamp"] == created["metadata"]["creationTimestamp"]
    assert int(replaced["metadata"]["resourceVersion"]) > int(
        created["metadata"]["resourceVersion"]
    )


def test_delete(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    path = write("cm.yaml", configmap("x"))
    kubectl.ok(*ns, "create", "-f", path)
    kubectl.ok(*ns, "create", "-f", write("other.yaml", configmap("other")))
    assert kubectl.ok(*ns, "delete", "configmap", "x").out_lines == ['configmap "x" deleted']
    assert kubectl.ok(*ns, "get", "cm", "-o", "name").out_lines == ["configmap/other"]
    again = kubectl.fails(*ns, "delete", "configmap", "x")
    assert again.err_lines == ['Error from server (NotFound): configmaps "x" not found']
    kubectl.ok(*ns, "create", "-f", path)
    assert kubectl.ok(*ns, "delete", "-f", path).out_lines == ['configmap "x" deleted']
    from_file = kubectl.fails(*ns, "delete", "-f", path)
    assert from_file.err_lines == [
        f'Error from server (NotFound): error when deleting "{path}": configmaps "x" not found'
    ]


def test_label_and_annotate(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    kubectl.ok(*ns, "create", "-f", write("cm.yaml", configmap("x")))

    assert kubectl.ok(*ns, "label", "cm", "x", "env=prod").out_lines == ["configmap/x labeled"]
    assert kubectl.ok(*ns, "annotate", "cm", "x", "note=hi").out_lines == ["configmap/x annotated"]
    meta = kubectl.json(*ns, "get", "cm", "x")["metadata"]
    assert meta["labels"] == {"env": "prod"}
    assert meta["annotations"] == {"note": "hi"}
    assert kubectl.ok(*ns, "get", "cm", "-l", "env=prod", "-o", "name").out_lines == ["configmap/x"]

    clash = kubectl.fails(*ns, "label", "cm", "x", "env=dev")
    assert clash.err_lines == ["error: 'env' already has a value (prod), and --overwrite is false"]
    overwrite = kubectl.ok(*ns, "label", "cm", "x", "env=dev", "--overwrite")
    assert overwrite.out_lines == ["configmap/x labeled"]
    assert kubectl.json(*ns, "get", "cm", "x")["metadata"]["labels"] == {"env": "dev"}

    removed = kubectl.ok(*ns, "label", "cm", "x", "env-")
    assert removed.out_lines == ["configmap/x unlabeled"]
    assert "labels" not in kubectl.json(*ns, "get", "cm", "x")["metadata"]
    assert kubectl.ok(*ns, "annotate", "cm", "x", "note-").out_lines == ["configmap/x annotated"]
    assert "annotations" not in kubectl.json(*ns, "get", "cm", "x")["metadata"]

    missing = kubectl.fails(*ns, "label", "cm", "nope", "env=prod")
    assert missing.err_lines == ['Error from server (NotFound): configmaps "nope" not found']


# --- errors ---------------------------------------------------------------------------------


def test_not_found(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    line = 'Error from server (NotFound): configmaps "nope" not found'
    assert kubectl.fails(*ns, "get", "configmap", "nope").err_lines == [line]
    assert kubectl.fails(*ns, "get", "configmap", "nope", "-o", "json").err_lines == [line]
    assert kubectl.fails(*ns, "delete", "configmap", "nope").err_lines == [line]
    patch = kubectl.fails(*ns, "patch", "configmap", "nope", "--type=merge", "-p", "{}")
    assert patch.err_lines == [line]
    path = write("x.yaml", configmap("x"))
    replace = kubectl.fails(*ns, "replace", "-f", path)
    assert replace.err_lines == [
        f'Error from server (NotFound): error when replacing "{path}": configmaps "x" not found'
    ]


def test_already_exists(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    path = write("cm.yaml", configmap("x"))
    kubectl.ok(*ns, "create", "-f", path)
    result = kubectl.fails(*ns, "create", "-f", path)
    assert result.err_lines == [
        f'Error from server (AlreadyExists): error when creating "{path}": '
        'configmaps "x" already exists'
    ]


def test_replace_with_stale_resource_version_conflicts(
    kubectl: Kubectl, namespace: str, write
) -> None:
    ns = ("-n", namespace)
    path = write("cm.yaml", configmap("x"))
    stale = kubectl.json(*ns, "create", "-f", path)["metadata"]["resourceVersion"]
    kubectl.ok(*ns, "patch", "cm", "x", "--type=merge", "-p", '{"data":{"a":"2"}}')

    document = yaml.safe_load(configmap("x", {"a": "mine"}))
    document["metadata"]["resourceVersion"] = stale
    write("cm.yaml", yaml.safe_dump(document))
    result = kubectl.fails(*ns, "replace", "-f", path)
    assert result.err_lines == [
        f'Error from server (Conflict): error when replacing "{path}": Operation cannot be '
        'fulfilled on configmaps "x": the object has been modified; please apply your changes '
        "to the latest version and try again"
    ]
    assert kubectl.json(*ns, "get", "cm", "x")["data"] == {"a": "2"}

    current = kubectl.json(*ns, "get", "cm", "x")["metadata"]["resourceVersion"]
    document["metadata"]["resourceVersion"] = current
    write("cm.yaml", yaml.safe_dump(document))
    assert kubectl.ok(*ns, "replace", "-f", path).out_lines == ["configmap/x replaced"]
    assert kubectl.json(*ns, "get", "cm", "x")["data"] == {"a": "mine"}


def test_invalid_name(kubectl: Kubectl, namespace: str, write) -> None:
    path = write("bad.yaml", configmap("Bad_Name"))
    result = kubectl.fails("-n", namespace, "create", "-f", path)
    assert result.err_lines == [INVALID_NAME_MESSAGE]


def test_unknown_field_is_rejected_by_default(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    path = write(
        "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\nspec:\n  a: b\n"
    )
    prefix = (
        f'Error from server (BadRequest): error when creating "{path}": ConfigMap in version "v1" '
        "cannot be handled as a ConfigMap: strict decoding error: "
    )
    assert kubectl.fails(*ns, "create", "-f", path).err_lines == [prefix + 'unknown field "spec"']
    strict = kubectl.fails(*ns, "create", "-f", path, "--validate=strict")
    assert strict.err_lines == [prefix + 'unknown field "spec"']

    both = write(
        "both.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  foo: bar\nspec:\n  a: b\n",
    )
    result = kubectl.fails(*ns, "create", "-f", both)
    assert result.err_lines == [
        prefix.replace(path, both) + 'unknown field "metadata.foo", unknown field "spec"'
    ]
    assert kubectl.run(*ns, "get", "cm", "x").returncode == 1


def test_unknown_field_validate_warn_and_false(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\ndata:\n  a: b\nspec:\n  a: b\n"
    warned = kubectl.run(*ns, "create", "-f", write("w.yaml", text.format("w")), "--validate=warn")
    assert warned.returncode == 0, str(warned)
    assert warned.out_lines == ["configmap/w created"]
    assert warned.err_lines == ['Warning: unknown field "spec"']

    quiet = kubectl.ok(*ns, "create", "-f", write("q.yaml", text.format("q")), "--validate=false")
    assert quiet.out_lines == ["configmap/q created"]

    for name in ("w", "q"):
        stored = kubectl.json(*ns, "get", "cm", name)
        assert "spec" not in stored
        assert stored["data"] == {"a": "b"}


# --- namespaces -----------------------------------------------------------------------------


def test_namespace_create_and_delete_removes_contents(
    kubectl: Kubectl, namespace: str, write
) -> None:
    name = f"{namespace}-gone"
    path = write("ns.yaml", namespace_manifest(name))
    assert kubectl.ok("create", "-f", path).out_lines == [f"namespace/{name} created"]
    assert_table(
        kubectl.ok("get", "namespace", name).out_lines,
        table([["NAME", "STATUS", "AGE"], [name, "Active", "<age>"]]),
    )
    ns_json = kubectl.json("get", "namespace", name)
    assert ns_json["metadata"]["labels"] == {"kubernetes.io/metadata.name": name}
    assert ns_json["status"] == {"phase": "Active"}

    kubectl.ok("-n", name, "create", "-f", write("cm.yaml", configmap("x")))
    assert kubectl.ok("-n", name, "get", "cm", "-o", "name").out_lines == ["configmap/x"]

    assert kubectl.ok("delete", "namespace", name).out_lines == [f'namespace "{name}" deleted']

    def deleted() -> Result | None:
        result = kubectl.run("get", "namespace", name)
        return result if result.returncode == 1 else None

    gone = eventually(deleted, what=f"namespace {name} to be deleted", interval=0.1)
    assert gone.err_lines == [f'Error from server (NotFound): namespaces "{name}" not found']
    listed = kubectl.run("-n", name, "get", "cm")
    assert listed.returncode == 0, str(listed)
    assert listed.stdout == ""
    assert listed.err_lines == [f"No resources found in {name} namespace."]

    # Recreated, the namespace is empty: its old content went with it.
    kubectl.ok("create", "-f", path)
    again = kubectl.run("-n", name, "get", "cm")
    assert again.err_lines == [f"No resources found in {name} namespace."]
    kubectl.ok("delete", "-f", path)


def test_create_in_missing_namespace(kubectl: Kubectl, write) -> None:
    path = write("cm.yaml", configmap("x"))
    result = kubectl.fails("-n", "missing", "create", "-f", path)
    assert result.err_lines == [
        f'Error from server (NotFound): error when creating "{path}": '
        'namespaces "missing" not found'
    ]
    # kubectl reports the missing namespace rather than the missing object.
    got = kubectl.fails("-n", "missing", "get", "cm", "x")
    assert got.err_lines == ['Error from server (NotFound): namespaces "missing" not found']


def test_system_namespace_cannot_be_deleted(fresh_server: KapiServer, tmp_path: Path) -> None:
    k = make_kubectl(fresh_server, tmp_path, DEFAULT_VERSION)
    for name in ("default", "kube-system", "kube-public"):
        result = k.fails("delete", "namespace", name)
        assert result.err_lines == [
            f'Error from server (Forbidden): namespaces "{name}" is forbidden: '
            "this namespace may not be deleted"
        ]
    still = k.ok("get", "namespaces", "default", "kube-system", "kube-public", "-o", "name")
    assert still.out_lines == [
        "namespace/default",
        "namespace/kube-system",
        "namespace/kube-public",
    ]


def test_system_namespaces_exist(kubectl: Kubectl) -> None:
    """kube-apiserver creates default, kube-system, kube-public and kube-node-lease itself."""
    names = ("default", "kube-node-lease", "kube-public", "kube-system")

    def listed() -> Result | None:
        result = kubectl.run("get", "namespaces", *names, "-o", "name")
        return result if result.returncode == 0 else None

    result = eventually(listed, what="the system namespaces", timeout=10, interval=0.2)
    assert result.out_lines == [f"namespace/{name}" for name in names]
    phases = kubectl.ok("get", "namespaces", *names, "-o", "jsonpath={.items[*].status.phase}")
    assert phases.stdout == "Active Active Active Active"


# --- other kinds ----------------------------------------------------------------------------


def test_pod_disruption_budget(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    path = write(
        "pdb.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: p1\n"
        "spec:\n  minAvailable: 2\n  selector:\n    matchLabels:\n      app: web\n"
        "---\n"
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: p2\n"
        "spec:\n  maxUnavailable: 25%\n  selector:\n    matchLabels:\n      app: db\n",
    )
    assert kubectl.ok(*ns, "create", "-f", path).out_lines == [
        "poddisruptionbudget.policy/p1 created",
        "poddisruptionbudget.policy/p2 created",
    ]
    assert_table(
        kubectl.ok(*ns, "get", "pdb").out_lines,
        [
            "NAME   MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE",
            "p1     2               N/A               0                     <age>",
            "p2     N/A             25%               0                     <age>",
        ],
    )
    p1 = kubectl.json(*ns, "get", "poddisruptionbudgets.policy", "p1")
    assert p1["apiVersion"] == "policy/v1"
    assert p1["kind"] == "PodDisruptionBudget"
    assert p1["metadata"]["generation"] == 1
    assert p1["spec"] == {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}
    assert kubectl.ok(*ns, "get", "pdb", "-o", "name").out_lines == [
        "poddisruptionbudget.policy/p1",
        "poddisruptionbudget.policy/p2",
    ]
    assert kubectl.ok(*ns, "delete", "pdb", "p2").out_lines == [
        'poddisruptionbudget.policy "p2" deleted'
    ]


def test_lease(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    path = write(
        "lease.yaml",
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: l1\n"
        "spec:\n  holderIdentity: node-a\n  leaseDurationSeconds: 15\n",
    )
    assert kubectl.ok(*ns, "create", "-f", path).out_lines == [
        "lease.coordination.k8s.io/l1 created"
    ]
    assert_table(
        kubectl.ok(*ns, "get", "leases").out_lines, ["NAME   HOLDER   AGE", "l1     node-a   <age>"]
    )
    lease = kubectl.json(*ns, "get", "lease.coordination.k8s.io", "l1")
    assert lease["apiVersion"] == "coordination.k8s.io/v1"
    assert lease["spec"] == {"holderIdentity": "node-a", "leaseDurationSeconds": 15}
    assert kubectl.ok(*ns, "get", "lease", "l1", "-o", "name").out_lines == [
        "lease.coordination.k8s.io/l1"
    ]
    patch = '{"spec":{"holderIdentity":"node-b"}}'
    kubectl.ok(*ns, "patch", "lease", "l1", "--type=merge", "-p", patch)
    holder = kubectl.ok(*ns, "get", "lease", "l1", "-o", "jsonpath={.spec.holderIdentity}")
    assert holder.stdout == "node-b"
    assert kubectl.fails(*ns, "get", "lease", "nope").err_lines == [
        'Error from server (NotFound): leases.coordination.k8s.io "nope" not found'
    ]


def test_secret_data(kubectl: Kubectl, namespace: str, write) -> None:
    ns = ("-n", namespace)
    path = write(
        "secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"
        "data:\n  x: aGVsbG8=\nstringData:\n  word: hi\n",
    )
    assert kubectl.ok(*ns, "create", "-f", path).out_lines == ["secret/s created"]
    assert kubectl.ok(*ns, "get", "secret", "s", "-o", "jsonpath={.data.x}").stdout == "aGVsbG8="
    secret = kubectl.json(*ns, "get", "secret", "s")
    assert secret["data"] == {"x": "aGVsbG8=", "word": "aGk="}
    assert secret["type"] == "Opaque"
    assert "stringData" not in secret
    assert_table(
        kubectl.ok(*ns, "get", "secrets").out_lines,
        ["NAME   TYPE     DATA   AGE", "s      Opaque   2      <age>"],
    )


@pytest.mark.parametrize(("value", "byte"), [("abc!", 3), ("aGVsbG8", 4)])
def test_secret_with_invalid_base64(
    kubectl: Kubectl, namespace: str, write, value: str, byte: int
) -> None:
    path = write(
        "secret.yaml",
        f'apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  x: "{value}"\n',
    )
    result = kubectl.fails("-n", namespace, "create", "-f", path)
    assert result.err_lines == [
        f'Error from server (BadRequest): error when creating "{path}": Secret in version "v1" '
        f"cannot be handled as a Secret: illegal base64 data at input byte {byte}"
    ]
