"""``kapi storage-versions``: the table, colours and data built from StorageVersion objects."""

from __future__ import annotations

import io
from typing import Any

import pytest

from kapi.cli.commands import storage_versions as sv


def entry(server: str, encoding: str, decodable: list[str] | None = None) -> dict[str, Any]:
    decodable = decodable or [encoding]
    return {
        "apiServerID": server,
        "encodingVersion": encoding,
        "decodableVersions": decodable,
        "servedVersions": decodable,
    }


def storage_version(name: str, *entries: dict[str, Any]) -> dict[str, Any]:
    encodings = {e["encodingVersion"] for e in entries}
    status: dict[str, Any] = {"storageVersions": list(entries)}
    if len(encodings) == 1:
        status["commonEncodingVersion"] = next(iter(encodings))
    return {"metadata": {"name": name}, "status": status}


def lease(name: str, hostname: str | None) -> dict[str, Any]:
    labels = {"apiserver.kubernetes.io/identity": "kube-apiserver"}
    if hostname is not None:
        labels["kubernetes.io/hostname"] = hostname
    return {"metadata": {"name": name, "namespace": "kube-system", "labels": labels}}


LEASES = [lease("apiserver-aaa", "h1"), lease("apiserver-bbb", "h2"), lease("apiserver-ccc", "h3")]

UPGRADE = [
    storage_version(
        "policy.poddisruptionbudgets",
        entry("apiserver-aaa", "policy/v1beta1", ["policy/v1beta1", "policy/v1"]),
        entry("apiserver-bbb", "policy/v1", ["policy/v1", "policy/v1beta1"]),
        entry("apiserver-ccc", "policy/v1", ["policy/v1"]),
    ),
    storage_version(
        "core.configmaps",
        entry("apiserver-aaa", "v1"),
        entry("apiserver-bbb", "v1"),
        entry("apiserver-ccc", "v1"),
    ),
    storage_version("apps.deployments", entry("apiserver-bbb", "apps/v1")),
    storage_version("example.com.widgets"),
]


def test_table_names_servers_by_hostname_and_marks_disagreement() -> None:
    lines = sv.render(sv.summarize(UPGRADE, LEASES))
    assert lines == [
        "RESOURCE                      COMMON    AGREE   h1               h2          h3",
        "apps.deployments              apps/v1   yes     -                apps/v1     -",
        "core.configmaps               v1        yes     v1               v1          v1",
        "example.com.widgets           <none>    -       -                -           -",
        "policy.poddisruptionbudgets   <none>    NO      policy/v1beta1   policy/v1   policy/v1",
    ]


def test_only_disagreeing_keeps_every_server_column() -> None:
    lines = sv.render(sv.summarize(UPGRADE, LEASES, only_disagreeing=True))
    assert lines == [
        "RESOURCE                      COMMON   AGREE   h1               h2          h3",
        "policy.poddisruptionbudgets   <none>   NO      policy/v1beta1   policy/v1   policy/v1",
    ]


def test_servers_without_lease_or_hostname_keep_their_id() -> None:
    leases = [lease("apiserver-aaa", "h1"), lease("apiserver-bbb", None)]
    summary = sv.summarize(UPGRADE[:1], leases)
    assert [(s.id, s.name) for s in summary.servers] == [
        ("apiserver-bbb", "apiserver-bbb"),
        ("apiserver-ccc", "apiserver-ccc"),
        ("apiserver-aaa", "h1"),
    ]


def test_two_ids_behind_one_hostname_keep_their_ids() -> None:
    leases = [
        lease("apiserver-aaa", "h1"),
        lease("apiserver-bbb", "h1"),
        lease("apiserver-ccc", "h3"),
    ]
    summary = sv.summarize(UPGRADE[:1], leases)
    assert [s.name for s in summary.servers] == ["apiserver-aaa", "apiserver-bbb", "h3"]


def test_wide_adds_ids_and_the_versions_every_server_decodes() -> None:
    rows = sv.table(sv.summarize(UPGRADE[:1], LEASES), wide=True)
    assert rows == [
        [
            "RESOURCE",
            "COMMON",
            "AGREE",
            "h1/apiserver-aaa",
            "h2/apiserver-bbb",
            "h3/apiserver-ccc",
            "DECODABLE BY ALL",
        ],
        [
            "policy.poddisruptionbudgets",
            "<none>",
            "NO",
            "policy/v1beta1",
            "policy/v1",
            "policy/v1",
            "policy/v1",
        ],
    ]


def test_colour_marks_no_and_the_odd_version_out_without_breaking_alignment() -> None:
    summary = sv.summarize(UPGRADE[:2], LEASES)
    plain = sv.render(summary)
    coloured = sv.render(summary, colour=True)
    assert coloured[:2] == plain[:2]  # header and the agreeing row are left alone
    assert coloured[2] == (
        "policy.poddisruptionbudgets   <none>   \x1b[31;1mNO\x1b[0m      "
        "\x1b[33mpolicy/v1beta1\x1b[0m   policy/v1   policy/v1"
    )
    strip = coloured[2].replace("\x1b[31;1m", "").replace("\x1b[33m", "").replace("\x1b[0m", "")
    assert strip == plain[2]


def test_colour_of_a_last_column_cell() -> None:
    objects = [
        storage_version(
            "core.secrets",
            entry("apiserver-aaa", "v1"),
            entry("apiserver-bbb", "v1"),
            entry("apiserver-ccc", "v2"),
        )
    ]
    line = sv.render(sv.summarize(objects, LEASES), colour=True)[1]
    assert line.endswith("v1   v1   \x1b[33mv2\x1b[0m")


def test_data_output() -> None:
    data = sv.as_data(sv.summarize(UPGRADE[:1], LEASES))
    assert data == {
        "servers": [
            {"apiServerID": "apiserver-aaa", "name": "h1"},
            {"apiServerID": "apiserver-bbb", "name": "h2"},
            {"apiServerID": "apiserver-ccc", "name": "h3"},
        ],
        "resources": [
            {
                "name": "policy.poddisruptionbudgets",
                "commonEncodingVersion": None,
                "agree": False,
                "encodingVersions": {"h1": "policy/v1beta1", "h2": "policy/v1", "h3": "policy/v1"},
                "decodableByAll": ["policy/v1"],
            }
        ],
    }


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("env", "tty", "expected"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"TERM": "dumb"}, True, False),
    ],
)
def test_colour_only_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], tty: bool, expected: bool
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    stream = _Tty() if tty else io.StringIO()
    assert sv.has_colour(stream) is expected
