"""An APIServer started inside the test's own event loop, for scenarios that call its
stores and controllers directly."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from kapi.server import APIServer, ServerConfig


def run_with_server(
    tmp_path: Path, scenario: Callable[[APIServer], Awaitable[Any]], **config: Any
) -> Any:
    """Start a server on ``tmp_path`` with ``config``, await ``scenario`` on it, stop it."""

    async def main() -> Any:
        server = APIServer(ServerConfig(data_dir=tmp_path, **config))
        await server.start()
        try:
            return await scenario(server)
        finally:
            await server.stop()

    return asyncio.run(main())
