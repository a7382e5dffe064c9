"""A LIST with a selector of thousands of terms, over more objects than one chunk.

kapi compiles a selector once and handles a list a chunk of objects at a time
(``kapi.runtime.cooperative``), parsing a long selector in a thread; these
tests check that the answer is still exactly the objects selected, in every
format, with pagination, a watch and a bad term, on a real server.  (How long
such a request makes others wait is measured in benchmarks/fairness_bench.py.)
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import yaml

from tests.conftest import KapiServer
from tests.helpers.objects import configmap, create, unique
from tests.helpers.status import assert_status, storage_unchanged
from tests.integration import protobuf_reader as pb
from tests.integration.paths import cm_path

#: Many chunks (``cooperative.CHUNK``), so decoding, filtering and encoding pause between them.
OBJECTS = 1_200
TERMS = 5_500
#: k0!=x,k1!=x,... : about 48 KB, the shape of the issue's pathological request.
SELECTOR = ",".join(f"k{i}!=x" for i in range(TERMS))
PROTOBUF = "application/vnd.kubernetes.protobuf"


def _name(i: int) -> str:
    return f"cm-{i:04d}"


#: Object i carries label k<i>: "x" (excluded by the selector) when i % 7 == 0, else "y".
EXPECTED = sorted(_name(i) for i in range(OBJECTS) if i % 7)


@pytest.fixture(scope="module")
def crowded(kapi_server: KapiServer) -> str:
    """A namespace of OBJECTS ConfigMaps, made once for this module's tests."""
    with kapi_server.client() as http:
        ns = unique("crowded")
        made = http.post(
            "/api/v1/namespaces",
            json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        )
        assert made.status_code == 201, made.text
        for i in range(OBJECTS):
            labels = {"app": "crowded", f"k{i}": "y" if i % 7 else "x"}
            create(http, ns, configmap(_name(i), metadata={"name": _name(i), "labels": labels}))
    return ns


def _list(http: httpx.Client, ns: str, selector: str, extra: str = "", **kw: Any) -> httpx.Response:
    """GET the namespace's ConfigMaps; the selector goes in the URL as is.

    ``k0!=x,...`` needs no escaping in a query, and escaped (``%21%3D``, ``%2C``)
    it would pass httpx's 64 KiB limit on a URL's query.
    """
    return http.get(f"{cm_path(ns)}?labelSelector={selector}{extra}", **kw)


def _names(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text[:500]
    return sorted(item["metadata"]["name"] for item in response.json()["items"])


def test_json_list_answers_exactly_the_selected_objects(http: httpx.Client, crowded: str) -> None:
    assert len(SELECTOR) > 48_000
    assert _names(_list(http, crowded, SELECTOR)) == EXPECTED
    # The same terms with one more that only some objects satisfy.
    narrowed = _list(http, crowded, SELECTOR + ",k3 in (y)")
    assert _names(narrowed) == [_name(3)]
    everything_else = http.get(cm_path(crowded), params={"labelSelector": "app=crowded"})
    assert len(_names(everything_else)) == OBJECTS
    # No selector: the stored bytes spliced, a chunk at a time, in key order.
    unfiltered = http.get(cm_path(crowded))
    assert [i["metadata"]["name"] for i in unfiltered.json()["items"]] == [
        _name(i) for i in range(OBJECTS)
    ]


def test_selected_list_in_pages(http: httpx.Client, crowded: str) -> None:
    seen: list[str] = []
    extra = "&limit=450"
    while True:
        page = _list(http, crowded, SELECTOR, extra)
        seen += _names(page)
        token = page.json()["metadata"].get("continue")
        if not token:
            break
        extra = f"&limit=450&continue={quote(token, safe='')}"
    assert sorted(seen) == EXPECTED
    assert len(seen) == len(set(seen))


def test_protobuf_yaml_and_table_lists(http: httpx.Client, crowded: str) -> None:
    proto = _list(http, crowded, SELECTOR, headers={"Accept": PROTOBUF})
    assert proto.status_code == 200
    api_version, kind, raw = pb.envelope(proto.content)
    assert (api_version, kind) == ("v1", "ConfigMapList")
    items = pb.fields(raw).get(2, [])  # ConfigMapList: metadata 1, items 2
    names = []
    for item in items:
        assert isinstance(item, bytes)
        metadata = pb.fields(item)[1][0]  # ConfigMap: metadata 1; ObjectMeta: name 1
        assert isinstance(metadata, bytes)
        name = pb.fields(metadata)[1][0]
        assert isinstance(name, bytes)
        names.append(name.decode())
    assert sorted(names) == EXPECTED

    as_yaml = _list(http, crowded, SELECTOR, headers={"Accept": "application/yaml"})
    assert as_yaml.status_code == 200
    assert as_yaml.headers["content-type"] == "application/yaml"
    listed = yaml.safe_load(as_yaml.text)
    assert sorted(i["metadata"]["name"] for i in listed["items"]) == EXPECTED
    # YAML and JSON say the same thing.  The list's resourceVersion is the store's
    # latest revision, which a background write (the identity lease's renewal) may
    # move between the two requests.
    as_json = _list(http, crowded, SELECTOR).json()
    yaml_rv = listed["metadata"].pop("resourceVersion")
    json_rv = as_json["metadata"].pop("resourceVersion")
    assert int(yaml_rv) <= int(json_rv)
    assert json.loads(json.dumps(listed)) == as_json

    table = _list(
        http,
        crowded,
        SELECTOR,
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
    )
    assert table.status_code == 200
    rows = table.json()["rows"]
    assert sorted(r["cells"][0] for r in rows) == EXPECTED
    assert sorted(r["object"]["metadata"]["name"] for r in rows) == EXPECTED


def test_field_selector_of_thousands_of_terms(http: httpx.Client, crowded: str) -> None:
    refused = ",".join(f"metadata.name!={_name(i)}" for i in range(0, OBJECTS, 2))
    response = http.get(f"{cm_path(crowded)}?fieldSelector={refused}")
    assert _names(response) == [_name(i) for i in range(1, OBJECTS, 2)]


def test_bad_last_term_of_a_long_selector_is_a_400(http: httpx.Client, crowded: str) -> None:
    with storage_unchanged(http, crowded):
        response = _list(http, crowded, SELECTOR + ",a in (b")
        assert_status(
            response,
            400,
            "BadRequest",
            "unable to parse requirement: found '', expected: ',' or ')'",
        )


def test_watch_with_a_long_selector(http: httpx.Client, crowded: str) -> None:
    listed = http.get(cm_path(crowded), params={"limit": "1"})
    rv = listed.json()["metadata"]["resourceVersion"]
    # A new object the selector excludes, then one it selects.
    create(
        http, crowded, configmap("late-out", metadata={"name": "late-out", "labels": {"k1": "x"}})
    )
    create(http, crowded, configmap("late-in", metadata={"name": "late-in", "labels": {"k1": "z"}}))
    try:
        query = f"labelSelector={SELECTOR}&watch=true&resourceVersion={rv}&timeoutSeconds=2"
        with http.stream("GET", f"{cm_path(crowded)}?{query}") as stream:
            assert stream.status_code == 200
            events = [json.loads(line) for line in stream.iter_lines() if line]
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
            ("ADDED", "late-in")
        ]
    finally:
        for name in ("late-out", "late-in"):
            assert http.delete(cm_path(crowded, name)).status_code == 200
