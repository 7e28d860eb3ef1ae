"""The `Recipe`: how one connection of the live-view benchmark connects to a live page.

Its own module so that `live.py` (the runner, kiln's and the floor's recipes) and
`live_peers.py` (the peers' recipes, which `live.py` imports) both import it one way.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Recipe:
    """How a benchmark connection connects: the same request for all N connections."""

    mode: str
    """"ws": `request` is a WebSocket upgrade, answered 101; "sse": `request` is a GET answered
    200 with a stream that stays open."""
    request: bytes
    """The whole HTTP/1.1 request every connection sends, as is (same bytes for all N)."""
    hello: bytes | None = None
    """ws only: a text frame's payload the client sends right after the 101, else None."""
