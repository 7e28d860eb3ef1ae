"""Every server the suite knows: kiln and the modern peers (`servers`), the functional and JVM
peers of the reports (`peers_functional`), their classic peers (`peers_classic`), the
WebSocket echo peers (`peers_ws`), and an earlier kiln to compare this checkout's with
(`baseline`).

Imports run one way: `servers` <- `peers_*` <- `registry` <- runner/cli. A peers module that is
missing or does not import (it may still be being written) leaves its servers out and says why
in `UNAVAILABLE`, so that the rest of the suite still runs.
"""

from __future__ import annotations

import importlib

from . import servers
from .servers import Server

PEER_MODULES = ("peers_functional", "peers_classic", "peers_ws", "baseline")
"""Modules under kilnbench/ that each export `SERVERS`, a list of `Server`s."""


def _load() -> tuple[list[Server], dict[str, str]]:
    found: list[Server] = list(servers.SERVERS)
    unavailable: dict[str, str] = {}
    for module in PEER_MODULES:
        try:
            loaded = importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError as e:
            if e.name != f"{__package__}.{module}":
                unavailable[module] = f"kilnbench/{module}.py does not import: {e}"
            else:
                unavailable[module] = f"kilnbench/{module}.py does not exist yet"
            continue
        except Exception as e:  # noqa: BLE001 - a half-written module must not stop the suite
            unavailable[module] = f"kilnbench/{module}.py does not import: {type(e).__name__}: {e}"
            continue
        entries = getattr(loaded, "SERVERS", None)
        if not isinstance(entries, list):
            unavailable[module] = f"kilnbench/{module}.py has no SERVERS list"
            continue
        names = {s.name for s in found}
        for server in entries:
            if server.name in names:
                unavailable[f"{module}:{server.name}"] = f"{server.name} is already registered; the entry in {module} is ignored"
                continue
            found.append(server)
            names.add(server.name)
    return found, unavailable


SERVERS, UNAVAILABLE = _load()
"""All registered servers, in order: kiln's own registry first, then each peers module's."""

BY_NAME: dict[str, Server] = {s.name: s for s in SERVERS}
