"""kubectl 1.27-1.33, command by command, against a real ``kapi serve``.

Each release gets a server and a fresh kubectl cache of its own, so every
release does its own discovery and OpenAPI downloads.  ``Kubectl.ok``
requires an empty stderr: no discovery, OpenAPI or deprecation complaint
may appear on any release.  Printed output is compared with what the
release prints against kube-apiserver (``goldens``).  1.27, 1.29, 1.31 and
1.33 run every command; 1.28, 1.30 and 1.32 a spot check.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import KapiServer
from tests.e2e import goldens
from tests.e2e.goldens import AGE, minor
from tests.e2e.printed import Table, parse_explain, parse_table, words
from tests.helpers.crds import crontab_crd, wait_established
from tests.helpers.events import ago, old_style
from tests.helpers.kubectl import (
    COMMAND_TIMEOUT,
    INVALID_NAME_MESSAGE,
    TIMESTAMP,
    Kubectl,
    configmap,
    make_kubectl,
)

pytestmark = pytest.mark.kubectl

Cell = str | re.Pattern[str]


def assert_rows(table: Table, header: list[str], rows: list[list[Cell]]) -> None:
    """The table has exactly ``header`` and ``rows``; a pattern cell must match in full."""
    assert table.header == header
    assert len(table.rows) == len(rows), table.rows
    for got, want in zip(table.rows, rows, strict=True):
        assert len(got) == len(want), got
        for cell, expected in zip(got, want, strict=True):
            if isinstance(expected, re.Pattern):
                assert expected.fullmatch(cell), f"{cell!r} in {got}"
            else:
                assert cell == expected, f"{cell!r} != {expected!r} in {got}"


def get_table(k: Kubectl, *args: str) -> Table:
    return parse_table(k.ok("get", *args).out_lines)


def pdb_lease_secret_manifests() -> str:
    return (
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: p1\n"
        "spec:\n  minAvailable: 2\n  selector:\n    matchLabels:\n      app: web\n"
        "---\n"
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: p2\n"
        "spec:\n  maxUnavailable: 25%\n  selector:\n    matchLabels:\n      app: db\n"
        "---\n"
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: l1\n"
        "spec:\n  holderIdentity: node-a\n  leaseDurationSeconds: 15\n"
        "---\n"
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  x: aGVsbG8=\n"
    )


def openapi_node(server: KapiServer, group_version: str, kind: str, path: list[str]) -> Any:
    """The schema ``kubectl explain`` renders for ``kind`` and ``path``, and the document."""
    prefix = "api" if "/" not in group_version else "apis"
    document = httpx.get(f"{server.url}/openapi/v3/{prefix}/{group_version}").json()
    group, _, version = group_version.rpartition("/")
    schemas = document["components"]["schemas"]
    node = next(
        s
        for s in schemas.values()
        if {"group": group, "version": version, "kind": kind}
        in s.get("x-kubernetes-group-version-kind", [])
    )
    for name in path:
        node = resolve(document, node)["properties"][name]
    return node, document


def resolve(document: Any, node: Any) -> Any:
    """Follow ``$ref`` or a lone ``allOf: [$ref]``, as the template does for properties."""
    if "$ref" in node:
        return document["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    all_of = node.get("allOf")
    if all_of and len(all_of) == 1 and "properties" not in node:
        return resolve(document, all_of[0])
    return node


def description_words(document: Any, node: Any) -> list[str]:
    """The words of the template's ``description``: the node's, then its ``allOf`` parts'."""
    if "$ref" in node:
        node = resolve(document, node)
    out = (node.get("description") or "").split()
    for part in node.get("allOf", []):
        out += description_words(document, part)
    return out


def check_explain(k: Kubectl, server: KapiServer, version: str, page: goldens.ExplainPage) -> None:
    """The page's structure is the golden's; its prose is the server's OpenAPI v3 text."""
    explained = parse_explain(k.ok("explain", page.path).stdout)
    assert explained.header == page.header
    assert explained.field == page.expected_field_block(version)
    assert explained.fields == page.expected_fields(version)

    path = page.path.split(".")[1:]
    node, document = openapi_node(server, page.group_version, page.kind, path)
    described = description_words(document, node) or ["<empty>"]
    assert words(explained.description) == described
    properties = resolve(document, node).get("properties", {})
    assert set(explained.descriptions) == set(properties)
    for name, lines in explained.descriptions.items():
        assert all(line.startswith("    ") for line in lines), lines
        expected = properties[name].get("description") or "<no description>"
        assert words(lines) == expected.split()


# --- every release -----------------------------------------------------------------------------


class _EveryRelease:
    """Commands checked on every release, the spot-checked ones included."""

    def test_version(self, k: Kubectl, server: KapiServer, version: str) -> None:
        info = httpx.get(f"{server.url}/version").json()
        skew = goldens.skew_warning(minor(version), int(info["minor"]))
        result = k.run("version")
        assert result.returncode == 0, str(result)
        client, kustomize, served = result.out_lines
        assert re.fullmatch(r"Kustomize Version: v\d+\.\d+\.\d+\S*", kustomize), kustomize
        if minor(version) == 27:
            # 1.27 prints the Go structs (its version.Info has no emulation fields).
            fields = ("Major", "Minor", "GitVersion", "GitCommit", "GitTreeState", "BuildDate")
            fields += ("GoVersion", "Compiler", "Platform")
            struct = ", ".join(f'{f}:"{info[f[0].lower() + f[1:]]}"' for f in fields)
            assert client.startswith('Client Version: version.Info{Major:"1", Minor:"27", ')
            assert served == f"Server Version: version.Info{{{struct}}}"
            assert result.err_lines == [goldens.VERSION_DEPRECATED, *skew]
        else:
            assert re.fullmatch(rf"Client Version: v{re.escape(version)}\.\d+", client), client
            assert served == f"Server Version: {info['gitVersion']}"
            assert result.err_lines == skew

        as_json = k.run("version", "-o", "json")
        assert as_json.returncode == 0, str(as_json)
        assert as_json.err_lines == skew
        printed = json.loads(as_json.stdout)["serverVersion"]
        assert {key: info[key] for key in printed} == printed
        assert printed["gitVersion"] == info["gitVersion"]

    def test_fresh_cache_prints_nothing_on_stderr(
        self, server: KapiServer, version: str, ns: str, write, tmp_path: Path
    ) -> None:
        """Discovery and OpenAPI downloads into an empty cache: no complaint on stderr."""
        fresh = make_kubectl(server, tmp_path, version)
        path = write("cm.yaml", configmap("fresh"))
        fresh.ok("get", "namespaces")
        fresh.ok("explain", "configmap")
        created = fresh.ok("-n", ns, "create", "-f", path, "--dry-run=server")
        assert created.out_lines == ["configmap/fresh created (server dry run)"]
        (host,) = (tmp_path / f"kubecache-{version}" / "discovery").iterdir()
        assert (host / "servergroups.json").is_file()
        for group_version in fresh.ok("api-versions").out_lines:
            assert (host / group_version / "serverresources.json").is_file(), group_version

    def test_api_versions(self, k: Kubectl, server: KapiServer) -> None:
        core = httpx.get(f"{server.url}/api").json()["versions"]
        groups = httpx.get(f"{server.url}/apis").json()["groups"]
        served = core + [v["groupVersion"] for g in groups for v in g["versions"]]
        printed = k.ok("api-versions").out_lines
        assert printed == sorted(served)
        expected = ("v1", "policy/v1", "coordination.k8s.io/v1", "apiextensions.k8s.io/v1")
        assert set(expected) <= set(printed)

    def test_api_resources(self, k: Kubectl) -> None:
        wide = parse_table(k.ok("api-resources", "-o", "wide").out_lines)
        assert wide.header == goldens.API_RESOURCES_WIDE_HEADER
        by_key = {(row[0], row[2]): row for row in wide.rows}
        assert len(by_key) == len(wide.rows), "a resource is listed twice"
        for row in goldens.API_RESOURCES:
            assert by_key.get((row[0], row[2])) == row
        # kubectl sorts by group, then by name; the core group comes first.
        groups = [row[2].rpartition("/")[0] for row in wide.rows]
        assert groups == sorted(groups)

        default = parse_table(k.ok("api-resources").out_lines)
        assert default.header == goldens.API_RESOURCES_HEADER
        assert default.rows == [row[:5] for row in wide.rows]

        namespaced = parse_table(k.ok("api-resources", "--namespaced=true").out_lines)
        cluster = parse_table(k.ok("api-resources", "--namespaced=false").out_lines)
        assert set(namespaced.column("NAMESPACED")) == {"true"}
        assert set(cluster.column("NAMESPACED")) == {"false"}
        assert {"namespaces", "customresourcedefinitions"} <= set(cluster.column("NAME"))
        assert {"configmaps", "leases", "poddisruptionbudgets"} <= set(namespaced.column("NAME"))
        assert sorted(namespaced.rows + cluster.rows) == sorted(default.rows)

    def test_get_tables(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        k.ok(*n, "create", "-f", write("cm.yaml", configmap("cm", {"a": "1", "b": "2"})))
        created = k.ok(*n, "create", "-f", write("more.yaml", pdb_lease_secret_manifests()))
        assert created.out_lines == [
            "poddisruptionbudget.policy/p1 created",
            "poddisruptionbudget.policy/p2 created",
            "lease.coordination.k8s.io/l1 created",
            "secret/s created",
        ]
        expected: dict[str, list[list[Cell]]] = {
            "configmaps": [["cm", "2", AGE]],
            "secrets": [["s", "Opaque", "1", AGE]],
            "poddisruptionbudgets": [
                ["p1", "2", "N/A", "0", AGE],
                ["p2", "N/A", "25%", "0", AGE],
            ],
            "leases": [["l1", "node-a", AGE]],
        }
        for resource, rows in expected.items():
            assert_rows(get_table(k, *n, resource), goldens.COLUMNS[resource], rows)
            wide = get_table(k, *n, resource, "-o", "wide")
            assert_rows(wide, goldens.WIDE_COLUMNS[resource], rows)
        assert_rows(
            get_table(k, "namespace", ns), goldens.COLUMNS["namespaces"], [[ns, "Active", AGE]]
        )

    def test_apply_twice_then_after_an_edit(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        path = write("cm.yaml", configmap("applied", {"a": "1"}))
        assert k.ok(*n, "apply", "-f", path).out_lines == ["configmap/applied created"]
        assert k.ok(*n, "apply", "-f", path).out_lines == ["configmap/applied unchanged"]
        write("cm.yaml", configmap("applied", {"a": "2", "b": "3"}))
        assert k.ok(*n, "apply", "-f", path).out_lines == ["configmap/applied configured"]
        applied = k.json(*n, "get", "configmap", "applied")
        assert applied["data"] == {"a": "2", "b": "3"}
        last = applied["metadata"]["annotations"][
            "kubectl.kubernetes.io/last-applied-configuration"
        ]
        assert json.loads(last)["data"] == {"a": "2", "b": "3"}

    @pytest.mark.parametrize("page", goldens.EXPLAIN_PAGES, ids=lambda p: p.path)
    def test_explain(
        self, k: Kubectl, server: KapiServer, version: str, page: goldens.ExplainPage
    ) -> None:
        check_explain(k, server, version, page)

    @pytest.mark.parametrize("path", goldens.EXPLAIN_V2_PAGES)
    def test_explain_openapi_v2(self, k: Kubectl, path: str) -> None:
        page = k.ok("explain", path, "--output=plaintext-openapiv2").out_lines
        structure = [line for line in page if line and not line.startswith("     ")]
        assert structure == goldens.EXPLAIN_V2_PAGES[path]

    def test_error_lines_and_exit_codes(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        missing = k.fails(*n, "get", "configmap", "nope")
        assert missing.err_lines == ['Error from server (NotFound): configmaps "nope" not found']

        path = write("cm.yaml", configmap("x"))
        stale = k.json(*n, "create", "-f", path)["metadata"]["resourceVersion"]
        exists = k.fails(*n, "create", "-f", path)
        assert exists.err_lines == [
            f'Error from server (AlreadyExists): error when creating "{path}": '
            'configmaps "x" already exists'
        ]

        invalid = k.fails(*n, "create", "-f", write("bad.yaml", configmap("Bad_Name")))
        assert invalid.err_lines == [INVALID_NAME_MESSAGE]

        k.ok(*n, "patch", "configmap", "x", "--type=merge", "-p", '{"data":{"a":"2"}}')
        document = yaml.safe_load(configmap("x", {"a": "mine"}))
        document["metadata"]["resourceVersion"] = stale
        write("cm.yaml", yaml.safe_dump(document))
        conflict = k.fails(*n, "replace", "-f", path)
        assert conflict.err_lines == [
            f'Error from server (Conflict): error when replacing "{path}": Operation cannot be '
            'fulfilled on configmaps "x": the object has been modified; please apply your '
            "changes to the latest version and try again"
        ]
        assert k.json(*n, "get", "configmap", "x")["data"] == {"a": "2"}


@pytest.mark.parametrize("version", goldens.SPOT_VERSIONS, indirect=True, scope="class")
class TestSpotCheck(_EveryRelease):
    """1.28, 1.30 and 1.32: discovery, tables, apply, explain and errors."""


# --- the full set, on 1.27, 1.29, 1.31 and 1.33 ------------------------------------------------


@pytest.fixture(scope="class")
def crontabs(k: Kubectl, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The two-version CronTab CRD of the integration tests, established."""
    crd = crontab_crd()
    path = tmp_path_factory.mktemp("crd") / "crd.yaml"
    path.write_text(yaml.safe_dump(crd))
    name = crd["metadata"]["name"]
    assert k.ok("create", "-f", str(path)).out_lines == [
        f"customresourcedefinition.apiextensions.k8s.io/{name} created"
    ]
    wait_established(k, name)
    return crd


@pytest.mark.parametrize("version", goldens.FULL_VERSIONS, indirect=True, scope="class")
class TestKubectlRelease(_EveryRelease):
    """Every command the suite covers."""

    def test_get_output_formats(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        k.ok(*n, "create", "-f", write("cm.yaml", configmap("x", {"a": "1"}, env="prod")))
        as_json = k.json(*n, "get", "configmap", "x")
        assert as_json["data"] == {"a": "1"}
        assert yaml.safe_load(k.ok(*n, "get", "cm", "x", "-o", "yaml").stdout) == as_json
        assert k.ok(*n, "get", "cm", "x", "-o", "name").out_lines == ["configmap/x"]
        uid = k.ok(*n, "get", "cm", "x", "-o", "jsonpath={.metadata.uid}").stdout
        assert uid == as_json["metadata"]["uid"]
        listed = k.ok(*n, "get", "cm", "-o", "jsonpath={range .items[*]}{.metadata.name}{end}")
        assert listed.stdout == "x"

        labelled = get_table(k, *n, "cm", "--show-labels")
        assert_rows(
            labelled, [*goldens.COLUMNS["configmaps"], "LABELS"], [["x", "1", AGE, "env=prod"]]
        )
        assert_rows(
            get_table(k, *n, "cm", "-l", "env=prod"),
            goldens.COLUMNS["configmaps"],
            [["x", "1", AGE]],
        )
        nothing = k.run(*n, "get", "cm", "-l", "env=dev")
        assert (nothing.returncode, nothing.stdout) == (0, "")
        assert nothing.err_lines == [f"No resources found in {ns} namespace."]

        everywhere = get_table(k, "cm", "-A", "-l", "env=prod")
        assert_rows(
            everywhere, ["NAMESPACE", *goldens.COLUMNS["configmaps"]], [[ns, "x", "1", AGE]]
        )

    def test_get_events_table_and_wide(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        about = k.json(*n, "create", "-f", write("cm.yaml", configmap("about")))
        event = old_style(
            "about.1", about, firstTimestamp=ago(3600), lastTimestamp=ago(20 * 60 + 5)
        )
        k.ok(*n, "create", "-f", write("event.yaml", yaml.safe_dump(event)))
        row = ["20m", "Warning", "BackOff", "configmap/about", "back-off restarting"]
        for resource in ("events", "events.events.k8s.io"):
            assert_rows(get_table(k, *n, resource), goldens.COLUMNS["events"], [row])
            wide = get_table(k, *n, resource, "-o", "wide")
            assert_rows(
                wide,
                goldens.WIDE_COLUMNS["events"],
                [[*row[:4], "", "kubelet, node-1", row[4], "60m", "2", "about.1"]],
            )

    def test_get_cronjob_wide(self, k: Kubectl, ns: str, write) -> None:
        manifest = {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "cj"},
            "spec": {
                "schedule": "*/5 * * * *",
                "jobTemplate": {
                    "spec": {
                        "template": {
                            "spec": {
                                "restartPolicy": "OnFailure",
                                "containers": [
                                    {"name": "a", "image": "busybox:1"},
                                    {"name": "b", "image": "busybox:2"},
                                ],
                            }
                        }
                    }
                },
            },
        }
        k.ok("-n", ns, "create", "-f", write("cj.yaml", yaml.safe_dump(manifest)))
        row: list[Cell] = ["cj", "*/5 * * * *", "<none>", "False", "0", "<none>", AGE]
        assert_rows(get_table(k, "-n", ns, "cronjobs"), goldens.COLUMNS["cronjobs"], [row])
        assert_rows(
            get_table(k, "-n", ns, "cronjobs", "-o", "wide"),
            goldens.WIDE_COLUMNS["cronjobs"],
            [[*row, "a,b", "busybox:1,busybox:2", "<none>"]],
        )

    def test_get_crd_and_custom_resources(
        self, k: Kubectl, ns: str, write, crontabs: dict[str, Any]
    ) -> None:
        name = crontabs["metadata"]["name"]
        created_at = k.ok("get", "crd", name, "-o", "jsonpath={.metadata.creationTimestamp}")
        assert TIMESTAMP.fullmatch(created_at.stdout)
        assert_rows(
            get_table(k, "crd", name),
            goldens.COLUMNS["customresourcedefinitions"],
            [[name, created_at.stdout]],
        )
        crontab = {
            "apiVersion": "stable.example.com/v1",
            "kind": "CronTab",
            "metadata": {"name": "ct"},
            "spec": {"cronSpec": "*/5 * * * *", "image": "busybox", "replicas": 2},
        }
        created = k.ok("-n", ns, "create", "-f", write("ct.yaml", yaml.safe_dump(crontab)))
        assert created.out_lines == ["crontab.stable.example.com/ct created"]
        # Declared columns replace the default AGE column (apiextensions' table convertor).
        row: list[Cell] = ["ct", "*/5 * * * *", "2"]
        assert_rows(get_table(k, "-n", ns, "crontabs"), ["NAME", "SPEC", "REPLICAS"], [row])
        assert_rows(
            get_table(k, "-n", ns, "crontabs", "-o", "wide"),
            ["NAME", "SPEC", "REPLICAS", "IMAGE"],
            [[*row, "busybox"]],
        )

    def test_get_watch_sees_updates(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        k.ok(*n, "create", "-f", write("cm.yaml", configmap("w")))
        with k.watch(*n, "get", "configmap", "w", "-w") as watch:
            watch.wait_for(lambda lines: len(lines) >= 2, "the first row")
            k.ok(*n, "patch", "configmap", "w", "--type=merge", "-p", '{"data":{"b":"2"}}')
            watch.wait_for(lambda lines: len(lines) >= 3, "the updated row")
            k.ok(*n, "delete", "configmap", "w")
            # kubectl prints a row for the deletion too (the object's last state).
            watch.wait_for(lambda lines: len(lines) >= 4, "the deleted row")
        assert_rows(
            parse_table(watch.lines),
            goldens.COLUMNS["configmaps"],
            [["w", "1", AGE], ["w", "2", AGE], ["w", "2", AGE]],
        )

    def test_create_from_file_and_generators(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        path = write("cm.yaml", configmap("from-file"))
        assert k.ok(*n, "create", "-f", path).out_lines == ["configmap/from-file created"]
        generated = k.ok(*n, "create", "configmap", "gen", "--from-literal=a=b")
        assert generated.out_lines == ["configmap/gen created"]
        secret = k.ok(*n, "create", "secret", "generic", "sec", "--from-literal=user=admin")
        assert secret.out_lines == ["secret/sec created"]
        other = f"{ns}-gen"
        assert k.ok("create", "namespace", other).out_lines == [f"namespace/{other} created"]

        assert k.json(*n, "get", "configmap", "gen")["data"] == {"a": "b"}
        stored = k.json(*n, "get", "secret", "sec")
        assert (stored["type"], stored["data"]) == ("Opaque", {"user": "YWRtaW4="})
        assert k.json("get", "namespace", other)["status"] == {"phase": "Active"}

    def test_server_side_apply(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        path = write("cm.yaml", configmap("ssa", {"a": "1"}))
        ssa = ("apply", "--server-side", "-f", path)
        assert k.ok(*n, *ssa).out_lines == ["configmap/ssa serverside-applied"]
        assert k.ok(*n, *ssa).out_lines == ["configmap/ssa serverside-applied"]
        k.ok(*n, "patch", "configmap", "ssa", "--type=merge", "-p", '{"data":{"a":"patched"}}')

        conflict = k.fails(*n, *ssa)
        assert conflict.err_lines == goldens.apply_conflict("kubectl-patch", ".data.a")
        assert k.json(*n, "get", "configmap", "ssa")["data"] == {"a": "patched"}

        forced = k.ok(*n, *ssa, "--force-conflicts")
        assert forced.out_lines == ["configmap/ssa serverside-applied"]
        live = k.json(*n, "get", "configmap", "ssa", "--show-managed-fields")
        assert live["data"] == {"a": "1"}
        owners = {
            (entry["manager"], entry["operation"]): entry.get("fieldsV1", {})
            for entry in live["metadata"]["managedFields"]
        }
        assert owners[("kubectl", "Apply")] == {"f:data": {"f:a": {}}}

    def test_diff(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        path = write("cm.yaml", configmap("d", {"a": "1"}))
        k.ok(*n, "apply", "-f", path)
        same = k.run(*n, "diff", "-f", path)
        assert (same.returncode, same.stdout, same.stderr) == (0, "", ""), str(same)

        write("cm.yaml", configmap("d", {"a": "2"}))
        changed = k.run(*n, "diff", "-f", path)
        assert changed.returncode == 1, str(changed)
        assert changed.stderr == ""
        hunk = [line for line in changed.out_lines if line[:1] in "+-" and line[1:2] == " "]
        assert hunk == ['-  a: "1"', '+  a: "2"'], changed.stdout
        # diff asks the server for a dry run: nothing changed.
        assert k.json(*n, "get", "configmap", "d")["data"] == {"a": "1"}

    def test_replace(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        path = write("cm.yaml", configmap("r", {"a": "1"}))
        created = k.json(*n, "create", "-f", path)
        write("cm.yaml", configmap("r", {"b": "2"}))
        assert k.ok(*n, "replace", "-f", path).out_lines == ["configmap/r replaced"]
        replaced = k.json(*n, "get", "configmap", "r")
        assert replaced["data"] == {"b": "2"}
        assert replaced["metadata"]["uid"] == created["metadata"]["uid"]

    def test_patch_types(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        k.ok(*n, "create", "-f", write("cm.yaml", configmap("p", {"a": "1", "b": "2"})))

        def data() -> dict[str, str]:
            return k.json(*n, "get", "configmap", "p")["data"]

        patch = ("patch", "configmap", "p", "-p")
        assert k.ok(*n, *patch, '{"data":{"c":"3"}}').out_lines == ["configmap/p patched"]
        assert data() == {"a": "1", "b": "2", "c": "3"}
        merge = k.ok(*n, *patch, '{"data":{"a":null}}', "--type=merge")
        assert merge.out_lines == ["configmap/p patched"]
        assert data() == {"b": "2", "c": "3"}
        ops = '[{"op":"replace","path":"/data/b","value":"two"},{"op":"remove","path":"/data/c"}]'
        assert k.ok(*n, *patch, ops, "--type=json").out_lines == ["configmap/p patched"]
        assert data() == {"b": "two"}
        same = k.ok(*n, *patch, '{"data":{"b":"two"}}', "--type=merge")
        assert same.out_lines == ["configmap/p patched (no change)"]

    def test_strategic_patch_merges_lists_by_key(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        pdb = (
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: smp\n"
            "spec:\n  minAvailable: 1\n  selector:\n    matchExpressions:\n"
            "    - {key: app, operator: In, values: [web]}\n"
        )
        k.ok(*n, "create", "-f", write("pdb.yaml", pdb))
        # PDB v1's selector is patched by replacement ("x-kubernetes-patch-strategy: replace"),
        # and metadata.finalizers merges as a set: apimachinery puts the patch's new items
        # before the live ones (normalizeElementOrder, as no $setElementOrder is sent).
        k.ok(*n, "patch", "pdb", "smp", "-p", '{"metadata":{"finalizers":["a.example/x"]}}')
        k.ok(*n, "patch", "pdb", "smp", "-p", '{"metadata":{"finalizers":["b.example/y"]}}')
        replaced = '{"spec":{"selector":{"matchLabels":{"app":"db"}}}}'
        k.ok(*n, "patch", "pdb", "smp", "-p", replaced)
        live = k.json(*n, "get", "pdb", "smp")
        assert live["metadata"]["finalizers"] == ["b.example/y", "a.example/x"]
        assert live["spec"]["selector"] == {"matchLabels": {"app": "db"}}
        k.ok(*n, "patch", "pdb", "smp", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')

    def test_edit_with_a_scripted_editor(self, k: Kubectl, ns: str, write, tmp_path: Path) -> None:
        n = ("-n", ns)
        k.ok(*n, "create", "-f", write("cm.yaml", configmap("e", {"a": "1"})))
        editor = tmp_path / "editor.sh"
        editor.write_text('#!/bin/sh\nsed -i \'s/^  a: "1"$/  a: edited/\' "$1"\n')
        editor.chmod(0o755)
        with_editor = Kubectl(k.binary, {**k.env, "EDITOR": str(editor)})
        assert with_editor.ok(*n, "edit", "configmap", "e").out_lines == ["configmap/e edited"]
        assert k.json(*n, "get", "configmap", "e")["data"] == {"a": "edited"}
        # Now the script finds nothing to change.
        unchanged = with_editor.run(*n, "edit", "configmap", "e")
        assert (unchanged.returncode, unchanged.stdout) == (0, ""), str(unchanged)
        assert unchanged.err_lines == ["Edit cancelled, no changes made."]

    def test_label_and_annotate(self, k: Kubectl, ns: str, write, version: str) -> None:
        n = ("-n", ns)
        k.ok(*n, "create", "-f", write("cm.yaml", configmap("la")))
        assert k.ok(*n, "label", "configmap", "la", "env=prod").out_lines == [
            "configmap/la labeled"
        ]
        annotated = k.ok(*n, "annotate", "configmap", "la", "note=hi")
        assert annotated.out_lines == [f"configmap/la {goldens.annotated(version)}"]
        meta = k.json(*n, "get", "configmap", "la")["metadata"]
        assert (meta["labels"], meta["annotations"]) == ({"env": "prod"}, {"note": "hi"})
        clash = k.fails(*n, "label", "configmap", "la", "env=dev")
        assert clash.err_lines == [
            "error: 'env' already has a value (prod), and --overwrite is false"
        ]
        assert k.ok(*n, "label", "configmap", "la", "env-").out_lines == ["configmap/la unlabeled"]
        assert "labels" not in k.json(*n, "get", "configmap", "la")["metadata"]

    @pytest.mark.parametrize("page", goldens.EXPLAIN_RECURSIVE, ids=lambda p: p.path)
    def test_explain_recursive(self, k: Kubectl, version: str, page: goldens.ExplainPage) -> None:
        explained = parse_explain(k.ok("explain", page.path, "--recursive").stdout)
        assert explained.header == page.header
        assert explained.field == page.expected_field_block(version)
        assert explained.fields == page.expected_fields(version)
        assert explained.descriptions == {}

    def test_explain_custom_resource(
        self,
        k: Kubectl,
        server: KapiServer,
        version: str,
        crontabs: dict[str, Any],
        tmp_path: Path,
    ) -> None:
        # The /openapi/v3 index is served as kube-apiserver serves it: Last-Modified "now"
        # and no ETag, so an If-Modified-Since in the same second gets a 304 and kubectl's
        # HTTP cache keeps an index fetched just before the CRD existed. A new cache reads
        # the current index, as the same kubectl would a second later.
        fresh = Kubectl(k.binary, {**k.env, "KUBECACHEDIR": str(tmp_path / "cache")})
        check_explain(fresh, server, version, goldens.CRONTAB_SPEC)

    def test_wait_for_established(self, k: Kubectl, write) -> None:
        crd = crontab_crd(plural="waiters", kind="Waiter")
        name = crd["metadata"]["name"]
        k.ok("create", "-f", write("crd.yaml", yaml.safe_dump(crd)))
        waited = k.ok("wait", "--for=condition=Established", f"crd/{name}", "--timeout=20s")
        assert waited.out_lines == [
            f"customresourcedefinition.apiextensions.k8s.io/{name} condition met"
        ]
        conditions = k.json("get", "crd", name)["status"]["conditions"]
        assert {c["type"]: c["status"] for c in conditions}["Established"] == "True"

    def test_wait_for_delete(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        k.ok(*n, "create", "-f", write("cm.yaml", configmap("held")))
        k.ok(
            *n,
            "patch",
            "configmap",
            "held",
            "-p",
            '{"metadata":{"finalizers":["e2e.example/hold"]}}',
        )
        assert k.ok(*n, "delete", "configmap", "held", "--wait=false").out_lines == [
            'configmap "held" deleted'
        ]
        # -v=6 logs each request as its response arrives: once the watch has started,
        # kubectl wait has seen the object, so removing the finalizer cannot race its
        # first read (which would find nothing and print nothing).
        waiter = subprocess.Popen(
            [k.binary, *n, "wait", "--for=delete", "configmap/held", "--timeout=20s", "-v=6"],
            env=k.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert waiter.stderr is not None
        log: list[str] = []
        try:
            for line in waiter.stderr:
                log.append(line)
                if "watch=true" in line:
                    break
            assert any("watch=true" in line for line in log), log
            assert waiter.poll() is None, "wait returned while the object still existed"
            # The object stays (with a deletionTimestamp) until its finalizer goes.
            assert "deletionTimestamp" in k.json(*n, "get", "cm", "held")["metadata"]
            k.ok(
                *n,
                "patch",
                "configmap",
                "held",
                "--type=merge",
                "-p",
                '{"metadata":{"finalizers":null}}',
            )
            stdout, stderr = waiter.communicate(timeout=COMMAND_TIMEOUT)
        finally:
            if waiter.poll() is None:
                waiter.kill()
                waiter.communicate()
        # Only kubectl's own request log (klog "I" lines) may be on stderr.
        stray = [line for line in [*log, *stderr.splitlines(True)] if not line.startswith("I")]
        assert (waiter.returncode, stdout, stray) == (0, "configmap/held condition met\n", [])

    def test_delete_and_server_dry_run(self, k: Kubectl, ns: str, write) -> None:
        n = ("-n", ns)
        path = write("cm.yaml", configmap("del"))
        k.ok(*n, "create", "-f", path)
        dry = k.ok(*n, "delete", "configmap", "del", "--dry-run=server")
        assert dry.out_lines == ['configmap "del" deleted (server dry run)']
        assert k.ok(*n, "get", "configmap", "del", "-o", "name").out_lines == ["configmap/del"]
        assert k.ok(*n, "delete", "-f", path).out_lines == ['configmap "del" deleted']
        gone = k.fails(*n, "delete", "configmap", "del")
        assert gone.err_lines == ['Error from server (NotFound): configmaps "del" not found']

    def test_describe(self, k: Kubectl, ns: str, write, version: str) -> None:
        n = ("-n", ns)
        k.ok(*n, "create", "-f", write("cm.yaml", configmap("desc", {"a": "1"}, app="demo")))
        described = k.ok(*n, "describe", "configmap", "desc").out_lines
        assert described == goldens.describe_configmap("desc", ns, "app=demo", {"a": "1"}, version)
        assert k.ok("describe", "namespace", ns).out_lines == goldens.describe_namespace(ns)
        missing = k.fails(*n, "describe", "configmap", "nope")
        assert missing.err_lines == ['Error from server (NotFound): configmaps "nope" not found']
