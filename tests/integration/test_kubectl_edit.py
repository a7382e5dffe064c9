"""``kubectl edit`` through the real kubectl against a real ``kapi serve``.

A scripted editor (``kubectl_editor.py``) plays the user: kubectl runs it on the
temporary file, once per pass of its edit loop. The expected lines are what
kubectl's edit loop (kubectl pkg/cmd/util/editor/editoptions.go) prints for
kube-apiserver's answers: a strategic merge patch for built-in kinds and a JSON
merge patch for custom resources, neither carrying a resourceVersion unless the
user changed it; 422 Invalid reopens the editor with the causes as comments; 409
and 404 end the edit and keep the file. Every stored object is read back over HTTP.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import KapiServer
from tests.helpers.crds import GROUP, crontab, crontab_crd, wait_established, write_manifest
from tests.helpers.kubectl import DEFAULT_VERSION, Kubectl, Result, json_documents, make_kubectl
from tests.integration.paths import cm_path

pytestmark = pytest.mark.kubectl

EDITOR_SCRIPT = Path(__file__).with_name("kubectl_editor.py")
VERSIONS = ("1.27", DEFAULT_VERSION, "1.33")
HEADER = [
    "# Please edit the object below. Lines beginning with a '#' will be ignored,",
    "# and an empty file will abort the edit. If an error occurs while saving this file will be",
    "# reopened with the relevant failures.",
    "#",
]
CONFIG_KEY_MESSAGE = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'[-._a-zA-Z0-9]+')"
)
NO_VALID_CHANGES = "error: Edit cancelled, no valid changes were saved."
STORED_COPY = re.compile(r'A copy of your changes has been stored to "(?P<file>[^"]+)"')
PLURAL = "edittabs"
CRD_NAME = f"{PLURAL}.{GROUP}"
UNCHANGED: dict[str, Any] = {}
"""An editor pass that saves the file as it was shown."""

FieldPath = list[str | int]


def change(*edits: tuple[FieldPath, Any], delete: tuple[FieldPath, ...] = ()) -> dict[str, Any]:
    """An editor pass that sets each (path, value) and removes each ``delete`` path."""
    return {"set": [[path, value] for path, value in edits], "delete": list(delete)}


@dataclass
class Edited:
    """What one ``kubectl edit`` did: its result and each file the editor was shown."""

    result: Result
    shown: list[str]

    def shown_document(self, index: int) -> Any:
        """The object (or List) in a shown file, without kubectl's comment header."""
        text = "\n".join(line for line in self.shown[index].splitlines() if line[:1] != "#")
        return yaml.safe_load(text)

    def reasons(self, index: int) -> list[str]:
        """The comment lines kubectl added after its standard header (the failures)."""
        comments = [line for line in self.shown[index].splitlines() if line[:1] == "#"]
        assert comments[: len(HEADER)] == HEADER, self.shown[index]
        return comments[len(HEADER) :]


@dataclass
class Editor:
    """A kubectl whose editor follows a plan; kubectl's temp files go to ``tmpdir``."""

    kubectl: Kubectl
    workdir: Path
    tmpdir: Path
    counter: Iterator[int]

    def edit(self, plan: list[dict[str, Any]], *args: str) -> Edited:
        directory = self.workdir / f"edit-{next(self.counter)}"
        directory.mkdir()
        plan_file = directory / "plan.json"
        plan_file.write_text(json.dumps(plan))
        env = {
            **self.kubectl.env,
            "KUBE_EDITOR": f"{sys.executable} {EDITOR_SCRIPT} {plan_file}",
            "TMPDIR": str(self.tmpdir),
        }
        result = Kubectl(self.kubectl.binary, env).run("edit", *args)
        shown = [path.read_text() for path in sorted(directory.glob("shown-*"))]
        return Edited(result, shown)

    @property
    def program(self) -> str:
        """kubectl names itself in messages by the base name of its binary."""
        return Path(self.kubectl.binary).name


def make_editor(kubectl: Kubectl, tmp_path: Path) -> Editor:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir(exist_ok=True)
    return Editor(kubectl, tmp_path, tmpdir, itertools.count())


@pytest.fixture
def editor(kubectl: Kubectl, tmp_path: Path) -> Editor:
    return make_editor(kubectl, tmp_path)


@pytest.fixture(scope="module")
def edittabs(
    kapi_server: KapiServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """test_crds' CronTab CRD under another name (status and scale subresources, replicas 1-10)."""
    directory = tmp_path_factory.mktemp("edittabs")
    kubectl = make_kubectl(kapi_server, directory, DEFAULT_VERSION)
    crd = crontab_crd(PLURAL, "EditTab")
    kubectl.ok("apply", "-f", write_manifest(directory, "crd.yaml", crd))
    wait_established(kubectl, CRD_NAME)
    yield crd
    kubectl.run("delete", "crd", CRD_NAME, "--wait=true")


def create_configmap(http: httpx.Client, namespace: str, name: str, **data: str) -> Any:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}
    response = http.post(cm_path(namespace), json=body)
    assert response.status_code == 201, response.text
    return response.json()


def stored_configmap(http: httpx.Client, namespace: str, name: str) -> Any:
    response = http.get(cm_path(namespace, name))
    assert response.status_code == 200, response.text
    return response.json()


def edittab_path(namespace: str, name: str) -> str:
    return f"/apis/{GROUP}/v1/namespaces/{namespace}/{PLURAL}/{name}"


def create_edittab(http: httpx.Client, namespace: str, name: str, **spec: Any) -> Any:
    body = {**crontab(name, **spec), "kind": "EditTab"}
    response = http.post(f"/apis/{GROUP}/v1/namespaces/{namespace}/{PLURAL}", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def without_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as kubectl edit shows it: it hides managedFields while the user edits."""
    metadata = {k: v for k, v in obj["metadata"].items() if k != "managedFields"}
    return {**obj, "metadata": metadata}


def managers(obj: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (entry["manager"], entry["operation"], entry.get("subresource", ""))
        for entry in obj["metadata"].get("managedFields", [])
    }


def stored_copy(result: Result, tmpdir: Path) -> Path:
    """The file kubectl says it kept; it must be in the TMPDIR it was given."""
    found = [m["file"] for line in result.err_lines if (m := STORED_COPY.fullmatch(line))]
    assert len(found) == 1, str(result)
    path = Path(found[0])
    assert path.parent == tmpdir and path.is_file(), str(result)
    return path


def invalid_edit_given_up(result: Result, tmpdir: Path, name: str) -> Path:
    """Check kubectl's lines for an invalid edit saved again unchanged; the copy it kept."""
    assert result.returncode == 1, str(result)
    copy = stored_copy(result, tmpdir)
    assert result.err_lines == [
        f'error: configmaps "{name}" is invalid',
        f'A copy of your changes has been stored to "{copy}"',
        NO_VALID_CHANGES,
    ]
    return copy


# --- built-in kinds: strategic merge patch ----------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_edit_configmap_data(
    kapi_server: KapiServer, http: httpx.Client, namespace: str, tmp_path: Path, version: str
) -> None:
    editor = make_editor(make_kubectl(kapi_server, tmp_path, version), tmp_path)
    before = create_configmap(http, namespace, "x", a="1", b="2")
    plan = [change((["data", "a"], "edited"), (["data", "c"], "new"), delete=(["data", "b"],))]
    edited = editor.edit(plan, "-n", namespace, "cm", "x", "--output-patch")
    assert edited.result.returncode == 0, str(edited.result)
    assert edited.result.err_lines == []
    assert edited.result.out_lines == [
        'Patch: {"data":{"a":"edited","b":null,"c":"new"}}',
        "configmap/x edited",
    ]
    assert edited.reasons(0) == []
    assert edited.shown_document(0) == without_managed_fields(before)
    after = stored_configmap(http, namespace, "x")
    assert after["data"] == {"a": "edited", "c": "new"}
    assert after["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]
    assert ("kubectl-edit", "Update", "") in managers(after)


@pytest.mark.parametrize("version", VERSIONS)
def test_saving_unchanged_file_cancels_the_edit(
    kapi_server: KapiServer, http: httpx.Client, namespace: str, tmp_path: Path, version: str
) -> None:
    editor = make_editor(make_kubectl(kapi_server, tmp_path, version), tmp_path)
    before = create_configmap(http, namespace, "x", a="1")
    edited = editor.edit([UNCHANGED], "-n", namespace, "configmap/x")
    assert edited.result.returncode == 0, str(edited.result)
    assert edited.result.out_lines == []
    assert edited.result.err_lines == ["Edit cancelled, no changes made."]
    assert stored_configmap(http, namespace, "x") == before
    assert list(editor.tmpdir.iterdir()) == []


CRONJOB_CONTAINERS = ["spec", "jobTemplate", "spec", "template", "spec", "containers"]


def test_edit_cronjob_labels_and_containers_by_merge_key(
    editor: Editor, http: httpx.Client, namespace: str
) -> None:
    containers = [{"name": "main", "image": "busybox:1.36"}, {"name": "side", "image": "busybox"}]
    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "labels": {"app": "web"}},
        "spec": {
            "schedule": "0 1 * * *",
            "jobTemplate": {
                "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": containers}}}
            },
        },
    }
    path = f"/apis/batch/v1/namespaces/{namespace}/cronjobs"
    assert http.post(path, json=cronjob).status_code == 201
    plan = [
        change(
            (["metadata", "labels", "tier"], "backend"),
            (["spec", "successfulJobsHistoryLimit"], 5),
            ([*CRONJOB_CONTAINERS, 0, "image"], "busybox:1.37"),
            delete=([*CRONJOB_CONTAINERS, 1],),
        )
    ]
    edited = editor.edit(plan, "-n", namespace, "cronjob", "nightly", "--output-patch")
    assert edited.result.returncode == 0, str(edited.result)
    assert edited.result.err_lines == []
    pod_spec = {
        "$setElementOrder/containers": [{"name": "main"}],
        "containers": [
            {"image": "busybox:1.37", "name": "main"},
            {"$patch": "delete", "name": "side"},
        ],
    }
    patch = {
        "metadata": {"labels": {"tier": "backend"}},
        "spec": {
            "jobTemplate": {"spec": {"template": {"spec": pod_spec}}},
            "successfulJobsHistoryLimit": 5,
        },
    }
    assert edited.result.out_lines == [
        f"Patch: {json.dumps(patch, separators=(',', ':'), sort_keys=True)}",
        "cronjob.batch/nightly edited",
    ]
    after = http.get(f"{path}/nightly").json()
    assert after["metadata"]["labels"] == {"app": "web", "tier": "backend"}
    assert after["spec"]["successfulJobsHistoryLimit"] == 5
    stored_containers = after["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in stored_containers] == [("main", "busybox:1.37")]


# --- invalid edits: the editor is reopened with the causes ------------------------------------


def bad_key_reasons(name: str, key: str) -> list[str]:
    return [
        f'# configmaps "{name}" was not valid:',
        f'# * data[{key}]: Invalid value: "{key}": {CONFIG_KEY_MESSAGE}',
        "#",
    ]


def test_invalid_edit_is_reopened_and_fixed(
    editor: Editor, http: httpx.Client, namespace: str
) -> None:
    create_configmap(http, namespace, "x", a="1", b="2")
    plan = [
        change((["data", "bad key"], "v"), (["data", "a"], "first")),
        change((["data", "a"], "fixed"), delete=(["data", "bad key"],)),
    ]
    edited = editor.edit(plan, "-n", namespace, "cm", "x")
    assert edited.result.returncode == 0, str(edited.result)
    assert edited.result.err_lines == ['error: configmaps "x" is invalid']
    assert edited.result.out_lines == ["configmap/x edited"]
    assert edited.reasons(1) == bad_key_reasons("x", "bad key")
    assert edited.shown_document(1)["data"] == {"a": "first", "b": "2", "bad key": "v"}
    assert stored_configmap(http, namespace, "x")["data"] == {"a": "fixed", "b": "2"}


@pytest.mark.parametrize("version", VERSIONS)
def test_invalid_edit_saved_again_unchanged_is_cancelled(
    kapi_server: KapiServer, http: httpx.Client, namespace: str, tmp_path: Path, version: str
) -> None:
    editor = make_editor(make_kubectl(kapi_server, tmp_path, version), tmp_path)
    before = create_configmap(http, namespace, "x", a="1")
    edited = editor.edit([change((["data", "bad key"], "v")), UNCHANGED], "-n", namespace, "cm/x")
    result = edited.result
    assert result.out_lines == []
    copy = invalid_edit_given_up(result, editor.tmpdir, "x")
    assert edited.reasons(1) == bad_key_reasons("x", "bad key")
    assert yaml.safe_load(copy.read_text())["data"] == {"a": "1", "bad key": "v"}
    assert stored_configmap(http, namespace, "x") == before


# --- changes on the server while the editor is open -------------------------------------------


def test_concurrent_change_is_merged_without_precondition(
    kubectl: Kubectl, editor: Editor, http: httpx.Client, namespace: str
) -> None:
    create_configmap(http, namespace, "x", a="1", b="2")
    meanwhile = [kubectl.binary, "-n", namespace, "patch", "cm", "x", "--type=merge"]
    concurrent = [*meanwhile, "-p", '{"data":{"a":"server","b":"server"}}']
    plan = [{"run": [concurrent], **change((["data", "a"], "mine"))}]
    edited = editor.edit(plan, "-n", namespace, "cm", "x", "--output-patch")
    assert edited.result.returncode == 0, str(edited.result)
    assert edited.result.err_lines == []
    assert edited.result.out_lines == ['Patch: {"data":{"a":"mine"}}', "configmap/x edited"]
    assert stored_configmap(http, namespace, "x")["data"] == {"a": "mine", "b": "server"}


def test_stale_resource_version_in_the_file_conflicts(
    editor: Editor, http: httpx.Client, namespace: str
) -> None:
    created = create_configmap(http, namespace, "x", a="1")
    updated = http.patch(
        cm_path(namespace, "x"),
        content=b'{"data":{"a":"2"}}',
        headers={"content-type": "application/merge-patch+json"},
    ).json()
    stale = created["metadata"]["resourceVersion"]
    plan = [change((["data", "a"], "mine"), (["metadata", "resourceVersion"], stale))]
    result = editor.edit(plan, "-n", namespace, "cm", "x").result
    assert result.returncode == 1, str(result)
    assert result.out_lines == []
    kept = sorted(editor.tmpdir.iterdir())
    assert len(kept) == 1
    assert result.err_lines == [
        'error: configmaps "x" could not be patched: Operation cannot be fulfilled on '
        'configmaps "x": the object has been modified; please apply your changes to the '
        "latest version and try again",
        f"You can run `{editor.program} replace -f {kept[0]}` to try this update again.",
    ]
    assert yaml.safe_load(kept[0].read_text())["data"] == {"a": "mine"}
    assert stored_configmap(http, namespace, "x") == updated


def test_object_deleted_while_editing(
    kubectl: Kubectl, editor: Editor, http: httpx.Client, namespace: str
) -> None:
    create_configmap(http, namespace, "x", a="1")
    delete = [kubectl.binary, "-n", namespace, "delete", "cm", "x"]
    plan = [{"run": [delete], **change((["data", "a"], "mine"))}]
    result = editor.edit(plan, "-n", namespace, "cm", "x").result
    assert result.returncode == 1, str(result)
    assert result.out_lines == []
    kept = sorted(editor.tmpdir.iterdir())
    assert len(kept) == 1
    assert result.err_lines == [
        'error: configmaps "x" could not be found on the server',
        f'The edits you made on deleted resources have been saved to "{kept[0]}"',
    ]
    assert http.get(cm_path(namespace, "x")).status_code == 404


# --- several objects in one file --------------------------------------------------------------


def test_edit_several_configmaps_as_one_list(
    editor: Editor, http: httpx.Client, namespace: str
) -> None:
    before = {name: create_configmap(http, namespace, name, k="1") for name in ("a", "b", "c")}
    plan = [change((["items", 0, "data", "k"], "2"), (["items", 2, "data", "new"], "3"))]
    edited = editor.edit(plan, "-n", namespace, "cm", "a", "b", "c")
    assert edited.result.returncode == 0, str(edited.result)
    assert edited.result.err_lines == []
    assert edited.result.out_lines == [
        "configmap/a edited",
        "configmap/b skipped",
        "configmap/c edited",
    ]
    shown = edited.shown_document(0)
    assert (shown["apiVersion"], shown["kind"]) == ("v1", "List")
    assert shown["items"] == [without_managed_fields(before[name]) for name in ("a", "b", "c")]
    after = {name: stored_configmap(http, namespace, name) for name in ("a", "b", "c")}
    assert after["a"]["data"] == {"k": "2"}
    assert after["b"] == before["b"]
    assert after["c"]["data"] == {"k": "1", "new": "3"}


def test_edit_several_with_one_invalid_keeps_the_valid_one(
    editor: Editor, http: httpx.Client, namespace: str
) -> None:
    before = {name: create_configmap(http, namespace, name, k="1") for name in ("a", "b", "c")}
    plan = [
        change((["items", 0, "data", "k"], "2"), (["items", 1, "data", "bad/key"], "x")),
        UNCHANGED,
    ]
    edited = editor.edit(plan, "-n", namespace, "cm", "a", "b", "c")
    result = edited.result
    assert result.out_lines == ["configmap/a edited", "configmap/c skipped"]
    invalid_edit_given_up(result, editor.tmpdir, "b")
    assert edited.reasons(1) == bad_key_reasons("b", "bad/key")
    assert stored_configmap(http, namespace, "a")["data"] == {"k": "2"}
    assert stored_configmap(http, namespace, "b") == before["b"]
    assert stored_configmap(http, namespace, "c") == before["c"]


def test_edit_as_json_prints_the_patched_objects(
    editor: Editor, http: httpx.Client, namespace: str
) -> None:
    before = {name: create_configmap(http, namespace, name, k="1") for name in ("a", "b")}
    edited = editor.edit(
        [change((["items", 0, "data", "k"], "2"))], "-n", namespace, "cm", "a", "b", "-o", "json"
    )
    assert edited.result.returncode == 0, str(edited.result)
    assert edited.result.err_lines == []
    body = "\n".join(line for line in edited.shown[0].splitlines() if line[:1] != "#")
    assert json.loads(body)["kind"] == "List"
    after_a = stored_configmap(http, namespace, "a")
    assert after_a["data"] == {"k": "2"}
    printed = json_documents(edited.result.stdout)
    assert printed == [without_managed_fields(after_a), without_managed_fields(before["b"])]


# --- custom resources: JSON merge patch -------------------------------------------------------


def test_edit_custom_resource(
    edittabs: Any, editor: Editor, http: httpx.Client, namespace: str
) -> None:
    create_edittab(http, namespace, "w", replicas=2)
    plan = [change((["spec", "replicas"], 3), (["spec", "image"], "nginx"))]
    edited = editor.edit(plan, "-n", namespace, "edittab", "w", "--output-patch")
    assert edited.result.returncode == 0, str(edited.result)
    assert edited.result.err_lines == []
    assert edited.result.out_lines == [
        'Patch: {"spec":{"image":"nginx","replicas":3}}',
        f"edittab.{GROUP}/w edited",
    ]
    after = http.get(edittab_path(namespace, "w")).json()
    assert after["spec"] == {"cronSpec": "*/5 * * * *", "image": "nginx", "replicas": 3}
    assert after["metadata"]["generation"] == 2


def test_invalid_custom_resource_edit_is_reopened_and_fixed(
    edittabs: Any, editor: Editor, http: httpx.Client, namespace: str
) -> None:
    create_edittab(http, namespace, "w", replicas=2)
    plan = [change((["spec", "replicas"], 50)), change((["spec", "replicas"], 4))]
    edited = editor.edit(plan, "-n", namespace, "edittabs.stable.example.com/w")
    assert edited.result.returncode == 0, str(edited.result)
    assert edited.result.err_lines == [f'error: {CRD_NAME} "w" is invalid']
    assert edited.result.out_lines == [f"edittab.{GROUP}/w edited"]
    assert edited.reasons(1) == [
        f'# {CRD_NAME} "w" was not valid:',
        "# * spec.replicas: Invalid value: 50: spec.replicas in body should be less than or "
        "equal to 10",
        "#",
    ]
    assert http.get(edittab_path(namespace, "w")).json()["spec"]["replicas"] == 4


@pytest.mark.parametrize("version", VERSIONS)
def test_edit_status_subresource(
    edittabs: Any,
    kapi_server: KapiServer,
    http: httpx.Client,
    namespace: str,
    tmp_path: Path,
    version: str,
) -> None:
    editor = make_editor(make_kubectl(kapi_server, tmp_path, version), tmp_path)
    before = create_edittab(http, namespace, "w", replicas=2)
    plan = [change((["status", "replicas"], 2), (["spec", "replicas"], 9))]
    edited = editor.edit(
        plan, "-n", namespace, "edittab", "w", "--subresource=status", "--output-patch"
    )
    assert edited.result.returncode == 0, str(edited.result)
    assert edited.result.err_lines == []
    assert edited.result.out_lines == [
        'Patch: {"spec":{"replicas":9},"status":{"replicas":2}}',
        f"edittab.{GROUP}/w edited",
    ]
    assert edited.shown_document(0) == without_managed_fields(before)
    after = http.get(edittab_path(namespace, "w")).json()
    assert after["status"] == {"replicas": 2}
    assert after["spec"] == before["spec"]
    assert after["metadata"]["generation"] == before["metadata"]["generation"]
    assert ("kubectl-edit", "Update", "status") in managers(after)
