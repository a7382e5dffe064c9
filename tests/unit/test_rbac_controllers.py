"""The RBAC bootstrap hook and ClusterRole aggregation, run twice on one storage as two
servers would: they agree, and the second finds nothing to write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kapi.controllers.rbac import ClusterRoleAggregationController, ensure_bootstrap_policy
from kapi.registry.predicate import SelectionPredicate
from tests.unit.test_store import Stores, run

GROUP = "rbac.authorization.k8s.io"
EVERYTHING = SelectionPredicate()


def _versions(items: list[dict[str, Any]]) -> dict[str, str]:
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in items}


def test_two_servers_bootstrap_and_aggregate_once(tmp_path: Path) -> None:
    async def body(stores: Stores) -> None:
        roles, bindings = stores(GROUP, "clusterroles"), stores(GROUP, "clusterrolebindings")
        await ensure_bootstrap_policy(roles, bindings)
        first = _versions((await roles.list(None, EVERYTHING)).items)
        await ensure_bootstrap_policy(roles, bindings)  # the second server: nothing to do
        assert _versions((await roles.list(None, EVERYTHING)).items) == first

        servers = [ClusterRoleAggregationController(roles) for _ in range(2)]
        for _ in range(3):  # edit takes view's rules, admin edit's: a few passes settle it
            for controller in servers:
                await controller.roles.replace((await roles.list(None, EVERYTHING)).items)
                await controller.sync()
        settled = (await roles.list(None, EVERYTHING)).items
        by_name = {o["metadata"]["name"]: o for o in settled}
        view_rules = by_name["system:aggregate-to-view"]["rules"]
        assert by_name["view"]["rules"] == view_rules
        assert by_name["edit"]["rules"][len(by_name["system:aggregate-to-edit"]["rules"]) :] == (
            view_rules
        )
        for controller in servers:
            await controller.roles.replace(settled)
            await controller.sync()
        assert _versions((await roles.list(None, EVERYTHING)).items) == _versions(settled)

    run(tmp_path, body)


def test_a_role_whose_selector_no_longer_parses_does_not_hold_up_the_others(
    tmp_path: Path,
) -> None:
    async def body(stores: Stores) -> None:
        roles = stores(GROUP, "clusterroles")
        rule = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}
        part = {"metadata": {"name": "part", "labels": {"team": "a"}}, "rules": [rule]}
        good = {
            "metadata": {"name": "good"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"team": "a"}}]},
        }
        for obj in (part, good):
            await roles.create({"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole", **obj})
        # As if stored before a stricter rule: "In" without values cannot become a selector.
        broken = {
            "metadata": {"name": "broken"},
            "aggregationRule": {
                "clusterRoleSelectors": [{"matchExpressions": [{"key": "t", "operator": "In"}]}]
            },
        }
        controller = ClusterRoleAggregationController(roles)
        await controller.roles.replace([broken, *(await roles.list(None, EVERYTHING)).items])
        await controller.sync()
        assert (await roles.get(None, "good"))["rules"] == [rule]

    run(tmp_path, body)
