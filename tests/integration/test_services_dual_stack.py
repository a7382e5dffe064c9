"""Dual-stack Services: one cluster IP per family, from a server given a range of each.

``--service-cluster-ip-range=<IPv4 CIDR>,<IPv6 CIDR>`` makes the cluster
dual-stack, as kube-apiserver's flag does.  PreferDualStack and
RequireDualStack Services get an IP of each family; SingleStack keeps one;
changing the policy adds or releases the secondary IP.  On a single-stack
server RequireDualStack is refused with upstream's message, and the family
rules are checked as upstream checks them.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags

V4, V6 = "10.97.0.0/28", "fd00:10:97::/120"
MERGE = {"content-type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def dual(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(
        tmp_path_factory, "dual-stack", "--service-cluster-ip-range", f"{V4},{V6}"
    )


@pytest.fixture
def client(dual: KapiServer) -> Iterator[httpx.Client]:
    with dual.client() as c:
        yield c


def service(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": {"app": name}, "ports": [{"port": 80}], **spec},
    }


def in_range(ip: str, cidr: str) -> bool:
    return ipaddress.ip_address(ip) in ipaddress.ip_network(cidr)


SERVICES = "/api/v1/namespaces/default/services"


def test_prefer_and_require_dual_stack_get_an_ip_of_each_family(client: httpx.Client) -> None:
    for policy in ("PreferDualStack", "RequireDualStack"):
        name = policy.lower()
        response = client.post(SERVICES, json=service(name, ipFamilyPolicy=policy))
        assert response.status_code == 201, response.text
        spec = response.json()["spec"]
        assert spec["ipFamilies"] == ["IPv4", "IPv6"]
        first, second = spec["clusterIPs"]
        assert spec["clusterIP"] == first
        assert in_range(first, V4) and in_range(second, V6), spec["clusterIPs"]

    ipv6_first = client.post(
        SERVICES, json=service("v6-first", ipFamilyPolicy="PreferDualStack", ipFamilies=["IPv6"])
    )
    assert ipv6_first.status_code == 201, ipv6_first.text
    spec = ipv6_first.json()["spec"]
    assert spec["ipFamilies"] == ["IPv6", "IPv4"]
    assert in_range(spec["clusterIPs"][0], V6) and in_range(spec["clusterIPs"][1], V4)

    single = client.post(SERVICES, json=service("single")).json()["spec"]
    assert (single["ipFamilyPolicy"], single["ipFamilies"]) == ("SingleStack", ["IPv4"])
    assert len(single["clusterIPs"]) == 1


def test_upgrade_adds_and_downgrade_releases_the_secondary_ip(client: httpx.Client) -> None:
    assert client.post(SERVICES, json=service("flip")).status_code == 201
    up = client.patch(
        f"{SERVICES}/flip", json={"spec": {"ipFamilyPolicy": "PreferDualStack"}}, headers=MERGE
    )
    assert up.status_code == 200, up.text
    primary, secondary = up.json()["spec"]["clusterIPs"]
    assert in_range(secondary, V6)

    down = client.patch(
        f"{SERVICES}/flip", json={"spec": {"ipFamilyPolicy": "SingleStack"}}, headers=MERGE
    )
    assert down.status_code == 200, down.text
    spec = down.json()["spec"]
    assert (spec["clusterIPs"], spec["ipFamilies"]) == ([primary], ["IPv4"])
    # The released IPv6 address can be asked for again.
    again = client.post(
        SERVICES,
        json=service(
            "taker",
            ipFamilyPolicy="RequireDualStack",
            clusterIPs=[_free_v4(client), secondary],
        ),
    )
    assert again.status_code == 201, again.text
    assert again.json()["spec"]["clusterIPs"][1] == secondary


def _free_v4(client: httpx.Client) -> str:
    used = {
        ip for s in client.get(SERVICES).json()["items"] for ip in s["spec"].get("clusterIPs") or ()
    }
    return next(str(ip) for ip in ipaddress.ip_network(V4).hosts() if str(ip) not in used)


def test_family_rules_are_checked_as_upstream(client: httpx.Client) -> None:
    cases = [
        (
            service("two-single", ipFamilyPolicy="SingleStack", ipFamilies=["IPv4", "IPv6"]),
            "spec.ipFamilyPolicy",
            "Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' "
            "when multiple IP families are specified",
        ),
        (
            service("twice", ipFamilyPolicy="RequireDualStack", ipFamilies=["IPv4", "IPv4"]),
            "spec.ipFamilies[1]",
            'Duplicate value: "IPv4"',
        ),
        (
            service("mismatch", ipFamilies=["IPv6"], clusterIPs=["10.97.0.5"]),
            "spec.clusterIPs[0]",
            'Invalid value: "10.97.0.5": expected an IPv6 value as indicated by `ipFamilies[0]`',
        ),
    ]
    for body, field, message in cases:
        response = client.post(SERVICES, json=body)
        assert response.status_code == 422, response.text
        causes = response.json()["details"]["causes"]
        assert {"reason": causes[0]["reason"], "field": field, "message": message} in [
            {"reason": c["reason"], "field": c["field"], "message": c["message"]} for c in causes
        ], causes
        assert client.get(f"{SERVICES}/{body['metadata']['name']}").status_code == 404


def test_a_single_stack_server_refuses_require_dual_stack(http: httpx.Client) -> None:
    response = http.post(SERVICES, json=service("needs-two", ipFamilyPolicy="RequireDualStack"))
    assert response.status_code == 422, response.text
    assert response.json()["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "RequireDualStack": this cluster is not configured for '
            "dual-stack services",
            "field": "spec.ipFamilyPolicy",
        }
    ]
    assert http.get(f"{SERVICES}/needs-two").status_code == 404
    prefer = http.post(SERVICES, json=service("prefers-two", ipFamilyPolicy="PreferDualStack"))
    assert prefer.status_code == 201, prefer.text
    assert prefer.json()["spec"]["ipFamilies"] == ["IPv4"]
    assert http.delete(f"{SERVICES}/prefers-two").status_code == 200


def test_a_headless_service_without_selector_is_dual_stack_anywhere(http: httpx.Client) -> None:
    body = service("headless-any", clusterIP="None")
    del body["spec"]["selector"]
    response = http.post(SERVICES, json=body)
    assert response.status_code == 201, response.text
    spec = response.json()["spec"]
    assert (spec["ipFamilyPolicy"], spec["ipFamilies"]) == ("RequireDualStack", ["IPv4", "IPv6"])
    assert spec["clusterIPs"] == ["None"]
    assert http.delete(f"{SERVICES}/headless-any").status_code == 200
