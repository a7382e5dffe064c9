"""The kubectl-like ``kapi`` commands against a real server, compared with the real kubectl.

Each test runs ``python -m kapi ...`` as a subprocess, as a user would, and
checks exit codes and exact output.  Where kubectl has an opinion the
expected output is kubectl's own for the same objects on the same server
(AGE cells masked: the two commands run at different seconds).
"""

from __future__ import annotations

import os
import pty
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kapi.cli.commands.session import error_message
from kapi.client import ApiError
from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kapi_cli import COMMAND_TIMEOUT, Kapi, make_kapi
from tests.helpers.kubectl import Kubectl

WATCH_TIMEOUT = 15

PDB_WARNING = (
    "policy/v1beta1 PodDisruptionBudget is deprecated in v1.21+, unavailable in v1.25+; "
    "use policy/v1 PodDisruptionBudget"
)
CONFIGMAP_NAMES = ("cm", "configmap", "configmaps", "ConfigMap")
PDB_NAMES = ("pdb", "pdb.policy", "poddisruptionbudgets.policy", "poddisruptionbudgets.v1.policy")
#: An age at the end of a table line (AGE is the last column of these tables).
AGE_AT_END = re.compile(r"(?<=\s)\d+[smhdy][0-9smhdy]*$", re.MULTILINE)


@pytest.fixture
def kapi(kapi_server: KapiServer) -> Kapi:
    return make_kapi(kapi_server)


@pytest.fixture(scope="module")
def server_1_24(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """A server emulating 1.24, which still serves (and warns about) policy/v1beta1."""
    yield from serve_with_flags(tmp_path_factory, "kapi-1.24", "--emulated-version", "1.24")


def configmap(name: str, data: dict[str, str] | None = None, **labels: str) -> str:
    metadata: dict[str, object] = {"name": name}
    if labels:
        metadata["labels"] = labels
    return yaml.safe_dump(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data or {}}
    )


def pdb(name: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "policy/v1beta1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": name},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": name}}},
        }
    )


def write(tmp_path: Path, name: str, *documents: str) -> str:
    path = tmp_path / name
    path.write_text("---\n".join(documents))
    return str(path)


# --- output formats, compared with kubectl ----------------------------------------------------


@pytest.fixture
def objects(kapi: Kapi, namespace: str, tmp_path: Path) -> str:
    """Three configmaps in the test's namespace, one of them with awkward YAML strings."""
    odd = {"multi": "a\nb\n", "num": "123", "colon": "a: b", "html": "<&>", "uni": "héllo"}
    path = write(
        tmp_path,
        "objects.yaml",
        configmap("a", {"k": "v"}, app="demo"),
        configmap("b", app="demo"),
        configmap("odd", odd),
    )
    kapi.ok("-n", namespace, "create", "-f", path)
    return namespace


@pytest.mark.parametrize(
    "args",
    [
        ("get", "configmaps"),
        ("get", "cm", "-o", "wide"),
        ("get", "cm", "a", "odd"),
        ("get", "cm/a", "ns/default"),
        ("get", "cm,ns", "-l", "app=demo"),
        ("get", "cm", "-A", "-l", "app=demo"),
    ],
    ids=" ".join,
)
def test_tables_match_kubectl(kapi: Kapi, kubectl: Kubectl, objects: str, args: tuple) -> None:
    ours = kapi.ok("-n", objects, *args).stdout
    theirs = kubectl.ok("-n", objects, *args).stdout
    assert AGE_AT_END.sub("AGE", ours) == AGE_AT_END.sub("AGE", theirs)
    assert ours.splitlines()[0].startswith(("NAME ", "NAMESPACE "))


@pytest.mark.parametrize(
    "args",
    [
        ("get", "cm", "odd", "-o", "yaml"),
        ("get", "cm", "odd", "-o", "json"),
        ("get", "cm", "-o", "yaml"),
        ("get", "cm", "-o", "json"),
        ("get", "cm", "a", "b", "-o", "yaml"),
        ("get", "cm", "-l", "app=demo", "-o", "name"),
        ("get", "configmap,namespace", "-o", "name"),
        ("get", "cm", "-l", "app=none", "-o", "yaml"),
        ("api-resources",),
        ("api-resources", "-o", "wide"),
        ("api-resources", "-o", "name"),
        ("api-versions",),
        ("explain", "configmaps"),
        ("explain", "cm.metadata"),
        ("explain", "pdb.status.conditions"),
        ("explain", "ns.spec.finalizers"),
    ],
    ids=" ".join,
)
def test_output_matches_kubectl(kapi: Kapi, kubectl: Kubectl, objects: str, args: tuple) -> None:
    assert kapi.ok("-n", objects, *args).stdout == kubectl.ok("-n", objects, *args).stdout


def test_empty_list_says_no_resources(kapi: Kapi, kubectl: Kubectl, namespace: str) -> None:
    ours = kapi.run("-n", namespace, "get", "cm", "-l", "app=none")
    theirs = kubectl.run("-n", namespace, "get", "cm", "-l", "app=none")
    assert (ours.returncode, ours.stdout, ours.stderr) == (0, "", theirs.stderr)
    assert ours.err_lines == [f"No resources found in {namespace} namespace."]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        *[(name, ["configmap/a", "configmap/b", "configmap/odd"]) for name in CONFIGMAP_NAMES],
        *[(name, []) for name in PDB_NAMES],
    ],
)
def test_resource_names_resolve_through_discovery(
    kapi: Kapi, objects: str, name: str, expected: list[str]
) -> None:
    assert kapi.ok("-n", objects, "get", name, "-o", "name").out_lines == expected


def test_unknown_resource_type(kapi: Kapi, namespace: str) -> None:
    result = kapi.run("-n", namespace, "get", "gadgets")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.err_lines == ['error: the server doesn\'t have a resource type "gadgets"']


# --- errors -----------------------------------------------------------------------------------


def test_not_found_matches_kubectl(kapi: Kapi, kubectl: Kubectl, namespace: str) -> None:
    line = 'Error from server (NotFound): configmaps "nope" not found'
    for args in (
        ("get", "cm", "nope"),
        ("get", "cm", "nope", "-o", "json"),
        ("delete", "cm", "nope"),
        ("patch", "cm", "nope", "--type=merge", "-p", "{}"),
    ):
        ours = kapi.run("-n", namespace, *args)
        theirs = kubectl.run("-n", namespace, *args)
        assert (ours.returncode, ours.stdout, ours.err_lines) == (1, "", [line])
        assert (ours.returncode, ours.stdout, ours.stderr) == (
            theirs.returncode,
            theirs.stdout,
            theirs.stderr,
        )


def test_partial_not_found_prints_the_rest(kapi: Kapi, objects: str) -> None:
    result = kapi.run("-n", objects, "get", "cm", "nope", "a", "-o", "name")
    assert (result.returncode, result.out_lines) == (1, ["configmap/a"])
    assert result.err_lines == ['Error from server (NotFound): configmaps "nope" not found']


def test_already_exists_matches_kubectl(
    kapi: Kapi, kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    path = write(tmp_path, "two.yaml", configmap("cm-1"), configmap("cm-2"))
    assert kapi.ok("-n", namespace, "create", "-f", path).out_lines == [
        "configmap/cm-1 created",
        "configmap/cm-2 created",
    ]
    ours = kapi.run("-n", namespace, "create", "-f", path)
    theirs = kubectl.run("-n", namespace, "create", "-f", path)
    assert ours.err_lines == [
        f'Error from server (AlreadyExists): error when creating "{path}": '
        f'configmaps "{name}" already exists'
        for name in ("cm-1", "cm-2")
    ]
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        theirs.returncode,
        theirs.stdout,
        theirs.stderr,
    )
    assert ours.returncode == 1


def test_replace_missing_and_invalid(kapi: Kapi, namespace: str, tmp_path: Path) -> None:
    path = write(tmp_path, "x.yaml", configmap("x"))
    missing = kapi.run("-n", namespace, "replace", "-f", path)
    assert (missing.returncode, missing.err_lines) == (
        1,
        [f'Error from server (NotFound): error when replacing "{path}": configmaps "x" not found'],
    )
    invalid = kapi.run(
        "-n", namespace, "create", "-f", write(tmp_path, "bad.yaml", configmap("B_"))
    )
    assert invalid.returncode == 1
    assert invalid.err_lines[0].startswith(
        'The ConfigMap "B_" is invalid: metadata.name: Invalid value: "B_": '
    )


def invalid_error(details: dict, message: str = 'ConfigMap "x" is invalid: m') -> ApiError:
    return ApiError({"reason": "Invalid", "message": message, "details": details})


def test_invalid_errors_are_rebuilt_from_details_as_kubectl_does() -> None:
    field = {"field": "data", "message": "Invalid value"}
    duplicated = invalid_error({"kind": "ConfigMap", "name": "x", "causes": [field, field]})
    assert error_message(duplicated, verb="creating", source="f.yaml") == (
        'The ConfigMap "x" is invalid: data: Invalid value'
    )
    two = invalid_error({"name": "x", "causes": [field, {"field": "f", "message": "m"}]})
    assert error_message(two) == 'The  "x" is invalid: \n* data: Invalid value\n* f: m'
    assert error_message(invalid_error({"kind": "ConfigMap", "name": "x"})) == (
        'The ConfigMap "x" is invalid'
    )
    assert error_message(invalid_error({}), verb="creating", source="f.yaml") == (
        'The request is invalid: error when creating "f.yaml": ConfigMap "x" is invalid: m'
    )


# --- writes -----------------------------------------------------------------------------------


def test_write_commands_print_kubectl_lines(kapi: Kapi, namespace: str, tmp_path: Path) -> None:
    ns = ("-n", namespace)
    path = write(tmp_path, "cm.yaml", configmap("x", {"a": "1"}))
    assert kapi.ok(*ns, "apply", "-f", path).out_lines == ["configmap/x created"]
    assert kapi.ok(*ns, "apply", "-f", path).out_lines == ["configmap/x unchanged"]
    write(tmp_path, "cm.yaml", configmap("x", {"b": "2"}))
    assert kapi.ok(*ns, "apply", "-f", path).out_lines == ["configmap/x configured"]
    # Client-side apply merges: the field the manifest no longer sets is kept.
    assert yaml.safe_load(kapi.ok(*ns, "get", "cm", "x", "-o", "yaml").stdout)["data"] == {
        "a": "1",
        "b": "2",
    }
    assert kapi.ok(*ns, "replace", "-f", path).out_lines == ["configmap/x replaced"]
    patched = kapi.ok(*ns, "patch", "cm", "x", "-p", '{"data":{"c":"3"}}')
    assert patched.out_lines == ["configmap/x patched"]
    same = kapi.ok(*ns, "patch", "configmap/x", "--type", "merge", "-p", "data: {c: '3'}")
    assert same.out_lines == ["configmap/x patched (no change)"]
    removed = kapi.ok(
        *ns, "patch", "cm", "x", "--type=json", "-p", '[{"op":"remove","path":"/data/c"}]'
    )
    assert removed.out_lines == ["configmap/x patched"]
    data = yaml.safe_load(kapi.ok(*ns, "get", "cm", "x", "-o", "yaml").stdout)["data"]
    assert data == {"b": "2"}
    assert kapi.ok(*ns, "delete", "-f", path).out_lines == ['configmap "x" deleted']
    gone = kapi.run(*ns, "delete", "-f", path)
    assert gone.err_lines == [
        f'Error from server (NotFound): error when deleting "{path}": configmaps "x" not found'
    ]


def test_stdin_directories_and_lists(kapi: Kapi, namespace: str, tmp_path: Path) -> None:
    ns = ("-n", namespace)
    directory = tmp_path / "manifests"
    directory.mkdir()
    write(directory, "1.yaml", configmap("one"), "", configmap("two"))
    write(
        directory,
        "2.json",
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "three"}}',
    )
    write(directory, "ignored.txt", configmap("ignored"))
    assert kapi.ok(*ns, "create", "-f", str(directory)).out_lines == [
        "configmap/one created",
        "configmap/two created",
        "configmap/three created",
    ]
    listed = yaml.safe_dump(
        {"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(configmap("four"))]}
    )
    assert kapi.ok(*ns, "apply", "-f", "-", stdin=listed).out_lines == ["configmap/four created"]
    again = kapi.run(*ns, "create", "-f", "-", stdin=listed)
    assert again.err_lines == [
        'Error from server (AlreadyExists): error when creating "STDIN": '
        'configmaps "four" already exists'
    ]
    deleted = kapi.ok(*ns, "delete", "cm", "one", "two")
    assert deleted.out_lines == ['configmap "one" deleted', 'configmap "two" deleted']


def test_describe(kapi: Kapi, objects: str) -> None:
    shown = yaml.safe_load(kapi.ok("-n", objects, "get", "cm", "a", "-o", "yaml").stdout)
    meta = shown["metadata"]
    assert kapi.ok("-n", objects, "describe", "cm", "a").out_lines == [
        "Name:         a",
        f"Namespace:    {objects}",
        "Labels:       app=demo",
        "Annotations:  <none>",
        "API Version:  v1",
        "Data:",
        "  K:   v",  # one tabwriter block with the next line, as in kubectl
        "Kind:  ConfigMap",
        "Metadata:",
        f"  Creation Timestamp:  {meta['creationTimestamp']}",
        f"  Resource Version:    {meta['resourceVersion']}",
        f"  UID:                 {meta['uid']}",
    ]


def test_watch_prints_new_rows(kapi: Kapi, namespace: str, tmp_path: Path) -> None:
    env = kapi.env
    process = subprocess.Popen(
        [sys.executable, "-m", "kapi", "-n", namespace, "get", "cm", "-w", "-o", "name"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    reader = threading.Thread(
        target=lambda: [lines.put(line.rstrip("\n")) for line in process.stdout],  # type: ignore[union-attr]
        daemon=True,
    )
    reader.start()
    try:
        kapi.ok("-n", namespace, "create", "-f", write(tmp_path, "w.yaml", configmap("w")))
        seen = []
        while "configmap/w" not in seen:
            try:
                seen.append(lines.get(timeout=WATCH_TIMEOUT))
            except queue.Empty:
                pytest.fail(f"watch never showed configmap/w; saw {seen}")
    finally:
        process.kill()
        process.wait(timeout=10)
        process.stdout.close()
        assert process.stderr is not None
        process.stderr.close()


# --- warnings (KEP-1693, kubectl's handler) --------------------------------------------------


def test_warnings_are_printed_once_with_prefix(server_1_24: KapiServer, tmp_path: Path) -> None:
    kapi = make_kapi(server_1_24)
    path = write(tmp_path, "pdbs.yaml", pdb("p1"), pdb("p2"))
    created = kapi.run("create", "-f", path)
    # Two requests warned; the text is written once.
    assert created.returncode == 0
    assert created.out_lines == [
        "poddisruptionbudget.policy/p1 created",
        "poddisruptionbudget.policy/p2 created",
    ]
    assert created.err_lines == [f"Warning: {PDB_WARNING}"]
    listed = kapi.run("get", "poddisruptionbudgets.v1beta1.policy", "-o", "name")
    assert listed.err_lines == [f"Warning: {PDB_WARNING}"]
    deleted = kapi.run("delete", "-f", path)
    assert deleted.err_lines == [f"Warning: {PDB_WARNING}"]


def test_warnings_as_errors(server_1_24: KapiServer, tmp_path: Path) -> None:
    kapi = make_kapi(server_1_24)
    path = write(tmp_path, "pdb.yaml", pdb("strict"))
    created = kapi.run("create", "-f", path, "--warnings-as-errors")
    # The command still runs to completion; then it fails as kubectl does.
    assert (created.returncode, created.out_lines) == (
        1,
        ["poddisruptionbudget.policy/strict created"],
    )
    assert created.err_lines == [f"Warning: {PDB_WARNING}", "error: 1 warning received"]
    clean = kapi.run("get", "pdb", "strict", "-o", "name", "--warnings-as-errors")
    assert (clean.returncode, clean.stdout, clean.stderr) == (
        0,
        "poddisruptionbudget.policy/strict\n",
        "",
    )


def _stderr_on_terminal(kapi: Kapi, *args: str, **env: str) -> bytes:
    """Run with stderr on a pseudo-terminal and return what the terminal received."""
    main, terminal = pty.openpty()
    try:
        subprocess.run(
            [sys.executable, "-m", "kapi", *args],
            env={**kapi.env, "TERM": "xterm", **env},
            stdout=subprocess.DEVNULL,
            stderr=terminal,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
    finally:
        os.close(terminal)
    received = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # EIO: the terminal's other end is closed and drained
            break
        if not chunk:
            break
        received += chunk
    os.close(main)
    return received


def test_warning_prefix_is_coloured_only_on_a_terminal(server_1_24: KapiServer) -> None:
    kapi = make_kapi(server_1_24)
    args = ("get", "poddisruptionbudgets.v1beta1.policy", "-o", "name")
    coloured = _stderr_on_terminal(kapi, *args)
    assert coloured == f"\x1b[33;1mWarning:\x1b[0m {PDB_WARNING}\r\n".encode()
    plain = _stderr_on_terminal(kapi, *args, NO_COLOR="1")
    assert plain == f"Warning: {PDB_WARNING}\r\n".encode()
    piped = kapi.run(*args)
    assert piped.stderr == f"Warning: {PDB_WARNING}\n"
