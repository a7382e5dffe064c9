"""``/healthz``, ``/livez`` and ``/readyz`` with named checks, as upstream's ``healthz``.

A check is a name and an async callable that raises (or returns a reason)
when unhealthy.  Post-start hooks register as ``poststarthook/<name>`` and
fail until their hook has finished, so readiness waits for them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from kapi.endpoints.metrics import APIServerMetrics

log = logging.getLogger(__name__)
Check = Callable[[], Awaitable[None]]


@dataclass
class HealthCheck:
    name: str
    check: Check


class HealthChecks:
    """The checks of one endpoint kind (``healthz``, ``livez`` or ``readyz``)."""

    def __init__(self, kind: str, metrics: APIServerMetrics) -> None:
        self.kind = kind
        self.metrics = metrics
        self.checks: list[HealthCheck] = []

    def add(self, name: str, check: Check) -> None:
        self.checks.append(HealthCheck(name, check))

    async def run(self, query: dict[str, str], only: str = "") -> tuple[int, str]:
        """Status code and body for a request to ``/<kind>`` or ``/<kind>/<only>``."""
        if only:
            chosen = [c for c in self.checks if c.name == only]
            if not chosen:
                return 404, "404 page not found\n"
        else:
            excluded = {x for x in query.get("exclude", "").split(",") if x}
            chosen = [c for c in self.checks if c.name not in excluded]
        lines: list[str] = []
        failed = False
        for hc in chosen:
            try:
                await hc.check()
            except Exception as exc:
                failed = True
                # Upstream withholds the reason from the body and logs it instead.
                lines.append(f"[-]{hc.name} failed: reason withheld")
                log.warning("%s check %s failed: %s", self.kind, hc.name, exc)
                self._record(hc.name, False)
            else:
                lines.append(f"[+]{hc.name} ok")
                self._record(hc.name, True)
        verbose = "verbose" in query or failed
        if only and not failed:
            return 200, "ok"
        if failed:
            return 500, "\n".join(lines) + f"\n{self.kind} check failed\n"
        if verbose:
            return 200, "\n".join(lines) + f"\n{self.kind} check passed\n"
        return 200, "ok"

    def _record(self, name: str, ok: bool) -> None:
        self.metrics.healthcheck.labels(name, self.kind).set(1 if ok else 0)
        self.metrics.healthchecks.labels(name, "success" if ok else "error", self.kind).inc()
