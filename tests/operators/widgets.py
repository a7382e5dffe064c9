"""A small kopf operator for ``widgets.kopf.kapi.test``, run by tests/integration/test_kopf.py.

Each handler posts an event about the widget and returns a result, which kopf
stores in the widget's status under the handler's name.  The delete handler
runs while kopf's finalizer holds the widget; kopf then removes the finalizer.
"""

from __future__ import annotations

from typing import Any

import kopf

GROUP, VERSION, PLURAL = "kopf.kapi.test", "v1", "widgets"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    # The events kopf posts name the operator as their reporting component; its log
    # lines about each object ("Handler ... succeeded.") are posted as events too.
    settings.posting.reporting_component = "widget-operator"
    settings.posting.loggers = True


@kopf.on.create(GROUP, VERSION, PLURAL)
def create_widget(body: kopf.Body, spec: kopf.Spec, name: str, **_: Any) -> dict[str, Any]:
    kopf.info(body, reason="WidgetCreated", message=f"widget {name} has size {spec.get('size')}")
    return {"size": spec.get("size")}


@kopf.on.update(GROUP, VERSION, PLURAL)
def update_widget(
    body: kopf.Body, old: kopf.Body, new: kopf.Body, retry: int, **_: Any
) -> dict[str, Any]:
    # The first attempt fails: kopf keeps the handler's progress (its retries) in the
    # object's annotations and status, and reads it back for the next attempt.
    if retry == 0:
        raise kopf.TemporaryError("not yet", delay=0.2)
    before, after = old["spec"].get("size"), new["spec"].get("size")
    kopf.event(body, type="Normal", reason="WidgetResized", message=f"{before} -> {after}")
    return {"size": after, "retry": retry}


@kopf.on.delete(GROUP, VERSION, PLURAL)
def delete_widget(body: kopf.Body, name: str, **_: Any) -> None:
    kopf.warn(body, reason="WidgetDeleted", message=f"widget {name} is going away")
