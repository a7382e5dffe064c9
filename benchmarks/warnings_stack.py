"""Where a deprecated GET's extra time goes, through uvicorn but without sockets.

``warnings_bench.py`` measures over loopback TCP, where rounds swing by tens
of percent; ``app_only.py`` calls the ASGI app alone and so misses what the
HTTP stack does with the extra ``Warning`` header.  This diagnostic feeds raw
HTTP/1.1 requests to the protocol ``kapi serve`` runs (uvicorn's
``HttpToolsProtocol`` writing each response in one piece,
:mod:`kapi.endpoints.protocol`), on uvloop, to a transport that keeps nothing, so
it counts request parsing, the app and response writing, in process CPU
time, with nothing else in the way.  Besides the PDB and widget GETs of
``warnings_bench.py`` it times the deprecated widget GET with the
deprecated-API bookkeeping replaced by one part at a time (nothing, the
warning alone, the bare header alone, the gauge alone), so that each part's
cost is the difference from ``nothing``.

    python benchmarks/warnings_stack.py [--rounds 11] [--requests 2000]

Prints the minimum and median over rounds of CPU microseconds per request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvloop
from uvicorn.config import Config
from uvicorn.server import ServerState

import warnings_bench as wb
from app_only import call
from kapi.endpoints.app import APIServerApp
from kapi.endpoints.protocol import CoalescingHttpToolsProtocol
from kapi.server import UVICORN_OPTIONS, APIServer, ServerConfig
from kapi.version import Version

#: What ``APIServerApp._record_deprecated`` is replaced with, per variant.
Recorder = Callable[[Any, Any, Any], None]


class CollectingTransport:
    """The transport uvicorn writes to: keeps nothing, never pauses."""

    def write(self, data: bytes) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 6443), "peername": ("127.0.0.1", 40000)}.get(
            name, default
        )

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def prepare(app: APIServerApp) -> None:
    """The namespace, the PDB and the widget of ``warnings_bench.prepare``, in process."""
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": wb.NAMESPACE}}
    await call(app, "POST", "/api/v1/namespaces", json.dumps(namespace).encode())
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": wb.PDB_NAME},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    pdbs = f"/apis/policy/v1/namespaces/{wb.NAMESPACE}/poddisruptionbudgets"
    await call(app, "POST", pdbs, json.dumps(pdb).encode())
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    await call(app, "POST", crds, json.dumps(wb.widget_crd()).encode())
    widget = {
        "apiVersion": f"{wb.CR_GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": wb.PDB_NAME},
    }
    widgets = f"/apis/{wb.CR_GROUP}/v1/namespaces/{wb.NAMESPACE}/widgets"
    for _ in range(200):  # served once the CRD controller has established it
        status, _ = await call(app, "POST", widgets, json.dumps(widget).encode())
        if status == 201:
            return
        await asyncio.sleep(0.05)
    raise RuntimeError("the widget CRD was never served")


async def main(rounds: int, requests: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = APIServer(ServerConfig(data_dir=Path(tmp), emulated_version=Version(1, 24)))
        await server.start()
        app = server.app()
        await prepare(app)
        options = {
            k: UVICORN_OPTIONS[k]
            for k in ("log_level", "access_log", "proxy_headers", "server_header")
        }
        config = Config(app=app, http="httptools", **options)
        config.load()
        protocol = CoalescingHttpToolsProtocol(
            config=config,
            server_state=ServerState(),
            app_state={},
            _loop=asyncio.get_running_loop(),
        )
        protocol.connection_made(CollectingTransport())  # type: ignore[arg-type]

        async def per_request(path: str) -> float:
            raw = f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode()
            started = time.process_time()
            for _ in range(requests):
                protocol.data_received(raw)
                while protocol.cycle is None or not protocol.cycle.response_complete:
                    await asyncio.sleep(0)
                await asyncio.sleep(0)
            return (time.process_time() - started) / requests * 1e6

        paths = {
            "GET policy/v1": wb.pdb_path("v1"),
            "GET policy/v1beta1": wb.pdb_path("v1beta1"),
            "GET widget v1": wb.widget_path("v1"),
            "GET widget v1beta1": wb.widget_path("v1beta1"),
        }
        variants: dict[str, Recorder] = {
            "widget v1beta1, nothing recorded": lambda info, d, c: None,
            "  + the warning only": lambda info, d, c: c.warning_recorder.add_warning(d.warning),
            "  + a bare Warning header only": lambda info, d, c: c.warning_recorder._headers.append(
                (b"warning", b'299 - "' + d.warning.encode() + b'"')
            ),
            "  + the gauge only": lambda info, d, c: app.metrics.record_deprecated(
                info, d.removed_release
            ),
        }
        results: dict[str, list[float]] = {name: [] for name in [*paths, *variants]}
        for _ in range(rounds):
            for name, path in paths.items():
                results[name].append(await per_request(path))
            for name, record in variants.items():
                app._record_deprecated = record  # type: ignore[method-assign]
                results[name].append(await per_request(paths["GET widget v1beta1"]))
                del app._record_deprecated
        await server.stop()
    print(f"CPU us per request, kapi serve's protocol on uvloop, {rounds} rounds x {requests}")
    print(f"{'':36}{'min':>8}{'median':>8}")
    for name, values in results.items():
        print(f"{name:36}{min(values):8.1f}{statistics.median(values):8.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    uvloop.run(main(args.rounds, args.requests))  # the event loop kapi serve runs on
