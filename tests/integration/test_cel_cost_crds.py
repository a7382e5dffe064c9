"""CRDs whose rules kube-apiserver's cost estimate accepts are created; one it refuses is not.

cel-go prices ``==`` by the smaller operand and ``startsWith`` by its argument, so a rule on
each item of an unbounded list of short strings, or on each value of an unbounded map of
strings, stays far under the 10M limit even though the rule runs about a million times
(kapi once priced both sides, and refused these). A messageExpression concatenating
``string(...)``, whose size cel-go cannot know, is refused with upstream's three errors
(kubernetes/kubernetes#124234 shows kube-apiserver's answer for the same schema).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.helpers.crds import CRDS, crd_of, install

GROUP = "costs.example.com"
HINT = (
    "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, "
    "maps, and strings are declared)"
)


def crd(plural: str, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return crd_of(GROUP, plural, kind, spec)


def served(http: httpx.Client, definition: dict[str, Any]) -> Iterator[str]:
    """Create the CRD (it must be accepted), wait until it serves, yield its objects' path."""
    install(http, definition)
    yield f"/apis/{GROUP}/v1/namespaces"
    http.delete(f"{CRDS}/{definition['metadata']['name']}")


@pytest.fixture
def tags_path(http: httpx.Client) -> Iterator[str]:
    spec = {
        "type": "object",
        "properties": {
            # Unbounded list; its items are short and each one carries the rule.
            "tags": {
                "type": "array",
                "items": {
                    "type": "string",
                    "maxLength": 64,
                    "x-kubernetes-validations": [{"rule": "self == 'baz'"}],
                },
            },
            # The same comparison as a rule on the whole list.
            "names": {
                "type": "array",
                "items": {"type": "string", "maxLength": 64},
                "x-kubernetes-validations": [{"rule": "self.all(x, x == 'baz')"}],
            },
        },
    }
    yield from served(http, crd("tagcosts", "TagCost", spec))


@pytest.fixture
def labels_path(http: httpx.Client) -> Iterator[str]:
    spec = {
        "type": "object",
        "properties": {
            "labels": {
                "type": "object",
                "additionalProperties": {
                    "type": "string",
                    "x-kubernetes-validations": [{"rule": "self.startsWith('k8s')"}],
                },
            }
        },
    }
    yield from served(http, crd("labelcosts", "LabelCost", spec))


def obj(kind: str, name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}


def test_rule_on_each_short_string_of_an_unbounded_list(
    http: httpx.Client, tags_path: str, namespace: str
) -> None:
    url = f"{tags_path}/{namespace}/tagcosts"
    ok = http.post(url, json=obj("TagCost", "ok", tags=["baz", "baz"], names=["baz"]))
    assert ok.status_code == 201, ok.text

    for name, spec, error in [
        (
            "bad-tag",
            {"tags": ["baz", "qux"]},
            "spec.tags[1]: Invalid value: \"qux\": failed rule: self == 'baz'",
        ),
        (
            "bad-name",
            {"names": ["qux"]},
            "spec.names: Invalid value: failed rule: self.all(x, x == 'baz')",
        ),
    ]:
        bad = http.post(url, json=obj("TagCost", name, **spec))
        assert bad.status_code == 422, bad.text
        status = bad.json()
        assert status["reason"] == "Invalid"
        assert status["message"] == f'TagCost.{GROUP} "{name}" is invalid: {error}'
        assert http.get(f"{url}/{name}").status_code == 404
    assert [i["metadata"]["name"] for i in http.get(url).json()["items"]] == ["ok"]


def test_rule_on_each_value_of_an_unbounded_map_of_strings(
    http: httpx.Client, labels_path: str, namespace: str
) -> None:
    url = f"{labels_path}/{namespace}/labelcosts"
    ok = http.post(url, json=obj("LabelCost", "ok", labels={"a": "k8s-a", "b": "k8s"}))
    assert ok.status_code == 201, ok.text

    bad = http.post(url, json=obj("LabelCost", "bad", labels={"a": "k8s-a", "b": "other"}))
    assert bad.status_code == 422, bad.text
    status = bad.json()
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        f'LabelCost.{GROUP} "bad" is invalid: '
        "spec.labels[b]: Invalid value: \"other\": failed rule: self.startsWith('k8s')"
    )
    assert http.get(f"{url}/bad").status_code == 404
    assert [i["metadata"]["name"] for i in http.get(url).json()["items"]] == ["ok"]


def refused(http: httpx.Client, definition: dict[str, Any]) -> dict[str, Any]:
    """Create a CRD that must be refused; its Status, after checking nothing was stored."""
    name = definition["metadata"]["name"]
    response = http.post(CRDS, json=definition)
    assert response.status_code == 422, response.text
    status = response.json()
    assert status["reason"] == "Invalid"
    assert http.get(f"{CRDS}/{name}").status_code == 404
    return status


def causes(status: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in status["details"]["causes"]]


def test_expensive_rule_is_refused_with_its_factor(http: httpx.Client) -> None:
    """compilation_test.go "string with contains": self.contains('test') on a string without
    maxLength costs 314574; run on each of 100 items, 31457400, 3.1 times the limit."""
    spec = {
        "type": "object",
        "properties": {
            "notes": {
                "type": "array",
                "maxItems": 100,
                "items": {
                    "type": "string",
                    "x-kubernetes-validations": [{"rule": "self.contains('test')"}],
                },
            }
        },
    }
    definition = crd("notecosts", "NoteCost", spec)
    status = refused(http, definition)
    field = (
        "spec.validation.openAPIV3Schema.properties[spec].properties[notes].items"
        ".x-kubernetes-validations[0].rule"
    )
    message = f"Forbidden: estimated rule cost exceeds budget by factor of 3.1x {HINT}"
    assert causes(status) == [(field, message)]
    assert status["message"] == (
        f'CustomResourceDefinition.apiextensions.k8s.io "{definition["metadata"]["name"]}" '
        f"is invalid: {field}: {message}"
    )


def attempts_crd() -> dict[str, Any]:
    """The schema of kubernetes/kubernetes#124234."""
    spec = {
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "x-kubernetes-validations": [
                    {
                        "rule": "self.attempts >= 0",
                        "messageExpression": "'invalid attempts: ' + string(self.attempts)",
                    }
                ],
                "properties": {
                    "attempts": {
                        "type": "integer",
                        "maximum": 2147483647,
                        "minimum": -2147483648,
                    }
                },
            }
        },
    }
    return crd("attemptcosts", "AttemptCost", spec)


EXPRESSION = (
    "spec.validation.openAPIV3Schema.properties[spec].properties[config]"
    ".x-kubernetes-validations[0].messageExpression"
)
#: kube-apiserver's answer, as kubernetes/kubernetes#124234 reports it.
UPSTREAM_CAUSES = [
    (
        EXPRESSION,
        f"Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x "
        f"{HINT}",
    ),
    (
        EXPRESSION,
        "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire "
        "OpenAPIv3 schema",
    ),
    (
        "spec.validation.openAPIV3Schema",
        "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 "
        f"schema exceeds budget by factor of more than 100x {HINT}",
    ),
]


def test_concatenating_a_string_conversion_is_refused(http: httpx.Client) -> None:
    got = causes(refused(http, attempts_crd()))
    assert got[:2] == UPSTREAM_CAUSES[:2]
    assert got[-1] == UPSTREAM_CAUSES[-1]


def test_concatenating_a_string_conversion_is_refused_with_upstreams_causes(
    http: httpx.Client,
) -> None:
    definition = attempts_crd()
    status = refused(http, definition)
    assert causes(status) == UPSTREAM_CAUSES
    assert status["message"] == (
        f'CustomResourceDefinition.apiextensions.k8s.io "{definition["metadata"]["name"]}" '
        "is invalid: [" + ", ".join(f"{f}: {m}" for f, m in UPSTREAM_CAUSES) + "]"
    )
