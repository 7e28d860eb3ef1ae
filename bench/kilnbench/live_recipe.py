"""The `Recipe` of LIVEBENCH.md: how one benchmark connection connects to a live page.

A stand-in until `kilnbench/live.py` (which LIVEBENCH.md names as its home) is on this branch;
the same frozen dataclass, field for field, so the two can be merged into one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Recipe:
    mode: str
    """"ws": `request` is a WebSocket upgrade, answered 101; "sse": `request` is a GET answered
    200 with a stream that stays open."""
    request: bytes
    """The whole HTTP/1.1 request every connection sends, as is (same bytes for all N)."""
    hello: bytes | None
    """ws only: a text frame's payload the client sends right after the 101, else None."""
