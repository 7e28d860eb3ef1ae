"""The registry of workloads: which endpoint, which load generator, and what a correct answer is.

Before a server's first run of a workload its endpoint is probed once: a 404
means the server does not have it (no row, not an error); any other non-200,
or a body that breaks the contract of DESIGN.md, is a row saying so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

Check = Callable[[bytes], "str | None"]
"""Returns None if a body honours the contract, else what is wrong with it."""

BIGTABLE_ROWS, BIGTABLE_COLS = 1000, 50
QUERIES = 20
MIX_EVERY = 10
"""The default `every` of the mix workloads: a long query every 10th request."""
MIX_EVERIES = (5, 10, 20, 50, 100)
MIX_CONNS = (10, 100, 1000)
MIX_MODES = ("blocking", "async")
"""The non-blocking Ruby report's table: every N, at each concurrency, blocking vs async."""
WIKI_PAGE = "/pages/tour"
"""The demo site's seeded long page (app/src/site/seed.rs, docs/wiki-page.md)."""
WIKI_TITLE = "A tour of kiln"
WIKI_COMMENTS = 20
WIKI_VIEWS = 10_000
"""Page views between the two RSS readings of `wiki-views` (issue 11)."""


def _exactly(expected: bytes) -> Check:
    def check(body: bytes) -> str | None:
        return None if body == expected else f"body {body[:40]!r}, expected {expected!r}"

    return check


def _json_message(body: bytes) -> str | None:
    try:
        value = json.loads(body)
    except ValueError:
        return f"not JSON: {body[:40]!r}"
    return None if value == {"message": "Hello, World!"} else f"wrong JSON: {body[:60]!r}"


def _bigtable(body: bytes) -> str | None:
    cells = body.count(b"<td")
    expected = BIGTABLE_ROWS * BIGTABLE_COLS
    return None if cells == expected else f"{cells} <td> cells, expected {expected}"


def _world(value: object) -> bool:
    return isinstance(value, dict) and {k.lower() for k in value} >= {"id", "randomnumber"}


def _one_world(body: bytes) -> str | None:
    try:
        return None if _world(json.loads(body)) else f"not a World row: {body[:60]!r}"
    except ValueError:
        return f"not JSON: {body[:40]!r}"


def _worlds(count: int) -> Check:
    def check(body: bytes) -> str | None:
        try:
            rows = json.loads(body)
        except ValueError:
            return f"not JSON: {body[:40]!r}"
        if isinstance(rows, list) and len(rows) == count and all(_world(r) for r in rows):
            return None
        return f"expected a list of {count} World rows: {body[:60]!r}"

    return check


def _length(n: int) -> Check:
    def check(body: bytes) -> str | None:
        return None if len(body) == n else f"expected {n} bytes, got {len(body)}"

    return check


def _fortunes(body: bytes) -> str | None:
    text = body.decode("utf-8", "replace")
    if "<table" in text and "Additional fortune added at request time." in text and "&lt;script&gt;" in text:
        return None
    return "missing the table, the added fortune or the escaped <script>"


def _wiki_page(body: bytes) -> str | None:
    """The long page: its title, its Markdown rendered (a table, code), its twenty comments
    as text (the one holding a script escaped) and the comment form."""
    text = body.decode("utf-8", "replace")
    if f"<h1>{WIKI_TITLE}</h1>" not in text:
        return f"no <h1>{WIKI_TITLE}</h1>: {body[:60]!r}"
    comments = text.count('<li id="c')
    if comments != WIKI_COMMENTS:
        return f"{comments} comments, expected {WIKI_COMMENTS}"
    missing = [part for part in ("<table>", "<pre><code", "&lt;script&gt;", 'name="csrf_token"') if part not in text]
    if "<script>" in text:
        missing.append("no unescaped <script>")
    return f"missing {', '.join(missing)}" if missing else None


def _json_any(body: bytes) -> str | None:
    try:
        json.loads(body)
        return None
    except ValueError:
        return f"not JSON: {body[:40]!r}"


@dataclass(frozen=True)
class Mix:
    """What a `/mix` workload varies: blocking or async access, and how often the long query runs."""

    mode: str
    every: int


@dataclass(frozen=True)
class Workload:
    """One measured scenario."""

    name: str
    path: str
    tool: str
    """`wrk`, `wrk-pipeline`, `ab`, `httperf`, `h2load` (HTTP/2 with prior knowledge), `idle`, or
    `views` (a fixed number of requests from a server just started, no warm-up: memory before
    and after), `wsload` (WebSocket echo, bench/wsload) or `ws-idle` (idle WebSockets held open)."""
    check: Check
    description: str
    conns: int = 100
    quick: bool = True
    """Whether `--quick` runs it."""
    default: bool = True
    """Whether a run that names no workloads runs it (otherwise only by name or group)."""
    mix: Mix | None = None
    """For a `/mix` workload: its mode and `every`."""
    requests: int = 0
    """For `views`: how many requests; for `ab`, if set, the report's own -n (else --ab-requests)."""
    time_floor_s: int = 0
    """The shortest time cap a capped ab run of it gets (a CGI program takes seconds per big table)."""
    streams: int = 0
    """For `h2load`: the streams in flight on each connection (`-m`)."""
    family: str | None = None
    """The contract workload whose endpoint this one loads in another way (a report's tool): a
    server whose `workloads` names the family runs it too."""
    size: int = 0
    """For `wsload`: the bytes of each echoed message."""
    deflate: bool = False
    """For `wsload`: offer permessage-deflate and send every message compressed."""
    probe: bool = True
    """Whether a plain GET probes the endpoint first (not for an upgrade, nor an endless stream)."""


def mix_name(mode: str, every: int, conns: int) -> str:
    """`mix-async-c100` for the default `every`, `mix-async-e50-c100` for the others."""
    return f"mix-{mode}-c{conns}" if every == MIX_EVERY else f"mix-{mode}-e{every}-c{conns}"


def _mix(mode: str, every: int, conns: int) -> Workload:
    return Workload(
        mix_name(mode, every, conns),
        f"/mix/{mode}?every={every}",
        "wrk",
        _json_any,
        f"{mode} database access, a long query every {every} requests, {conns} connections",
        conns=conns,
        quick=every == MIX_EVERY and conns == 100,
        default=every == MIX_EVERY,
        mix=Mix(mode, every),
    )


REPORT_WORKLOADS: list[Workload] = [
    Workload(
        "static-ab", "/static/hello.txt", "ab", _exactly(b"Hello, World!"), "the 13-byte file with ab -r -k -c 100 (Ocsigen report)",
        default=False, quick=False, family="static",
    ),
    Workload(
        "wiki-ab", WIKI_PAGE, "ab", _wiki_page, "the wiki page, rendered per request, with ab -r -k -c 100 (Ocsigen report)",
        default=False, quick=False, family="wiki",
    ),
    Workload(
        "pong-httperf-burst", "/pong", "httperf-burst", _exactly(b"PONG"),
        "Snap's pong: httperf --num-conns 1000 --num-calls 1000 --burst-length 20 --rate 1000",
        default=False, quick=False, family="pong",
    ),
    Workload(
        "file-httperf-burst", "/static/64k.bin", "httperf-burst", _length(64 << 10),
        "Snap's file (a 64 KiB file for its 50 KB PNG): httperf --num-calls 1000 --burst-length 20 --rate 1000",
        default=False, quick=False, family="static",
    ),
    Workload(
        "bigtable-ab", f"/bigtable?rows={BIGTABLE_ROWS}&cols={BIGTABLE_COLS}", "ab", _bigtable,
        f"Yesod bigtable ({BIGTABLE_ROWS}x{BIGTABLE_COLS}) with ab -r -k -c 10", conns=10,
        default=False, quick=False, family="bigtable", time_floor_s=15,
    ),
    Workload(
        "hello-ab-c50", "/hello", "ab", _exactly(b"Hello World!"), "the round-up's first post: ab -r -k -n 15000 -c 50",
        conns=50, requests=15_000, default=False, quick=False, family="hello",
    ),
]  # fmt: skip
"""Workloads that only the reports' tables run (`bench/run --report-table`), each with its report's tool."""

WORKLOADS: list[Workload] = [
    Workload("pong", "/pong", "wrk", _exactly(b"PONG"), "Snap's pong, keep-alive"),
    Workload("hello", "/hello", "wrk", _exactly(b"Hello World!"), "hello world, keep-alive"),
    Workload("plaintext", "/plaintext", "wrk", _exactly(b"Hello, World!"), "TechEmpower plaintext, keep-alive"),
    Workload(
        "plaintext-pipelined", "/plaintext", "wrk-pipeline", _exactly(b"Hello, World!"), "plaintext, pipelined depth 16"
    ),
    Workload("json", "/json", "wrk", _json_message, "TechEmpower JSON, serialised per request"),
    Workload("static", "/static/hello.txt", "wrk", _exactly(b"Hello, World!"), "13-byte static file"),
    Workload("static-1m", "/static/1m.bin", "wrk", _length(1 << 20), "1 MiB static file (sendfile)", quick=False),
    Workload(
        "bigtable",
        f"/bigtable?rows={BIGTABLE_ROWS}&cols={BIGTABLE_COLS}",
        "wrk",
        _bigtable,
        f"Yesod bigtable, {BIGTABLE_ROWS}x{BIGTABLE_COLS} HTML table per request",
    ),
    Workload("db", "/db", "wrk", _one_world, "TechEmpower single query"),
    Workload("queries", f"/queries?queries={QUERIES}", "wrk", _worlds(QUERIES), f"TechEmpower {QUERIES} queries"),
    Workload("fortunes", "/fortunes", "wrk", _fortunes, "TechEmpower fortunes"),
    Workload("updates", f"/updates?queries={QUERIES}", "wrk", _worlds(QUERIES), f"TechEmpower {QUERIES} updates"),
    *(_mix(mode, MIX_EVERY, conns) for mode in MIX_MODES for conns in MIX_CONNS),
    *(_mix(mode, every, conns) for every in MIX_EVERIES if every != MIX_EVERY for mode in MIX_MODES for conns in MIX_CONNS),
    Workload("wiki", WIKI_PAGE, "wrk", _wiki_page, "the demo site's long page: Markdown rendered per request, 20 comments"),
    Workload(
        "wiki-views",
        WIKI_PAGE,
        "views",
        _wiki_page,
        f"RSS of a fresh server before and after {WIKI_VIEWS:,} views of the long page (ab -k -c 10)",
        conns=10,
        quick=False,
        requests=WIKI_VIEWS,
    ),
    Workload("hello-ab", "/hello", "ab", _exactly(b"Hello World!"), "hello-world round-up: ab -r -k -c 100", family="hello"),
    Workload("pong-httperf", "/pong", "httperf", _exactly(b"PONG"), "Snap's pong at a fixed rate (httperf)"),
    Workload("static-httperf", "/static/hello.txt", "httperf", _exactly(b"Hello, World!"), "Snap's file at a fixed rate"),
    Workload("idle-10k", "/pong", "idle", _exactly(b"PONG"), "memory with 10,000 idle keep-alive connections"),
    *REPORT_WORKLOADS,
]

def _h2c(name: str, path: str, check: Check, what: str, streams: int) -> Workload:
    return Workload(
        f"{name}-h2c-m{streams}", path, "h2load", check, f"{what} over h2c, {streams} streams per connection (h2load)",
        streams=streams, quick=False, default=False,
    )  # fmt: skip


H2_WORKLOADS: list[Workload] = [
    _h2c(name, path, check, what, streams)
    for name, path, check, what in [
        ("pong", "/pong", _exactly(b"PONG"), "Snap's pong"),
        ("static", "/static/hello.txt", _exactly(b"Hello, World!"), "the 13-byte file"),
    ]
    for streams in (10, 100)
]
"""Issue 24's HTTP/2 workloads: h2load with prior knowledge, 100 connections. Only run when named
(`--workloads h2`), on kiln and `axum-h2`; `kilnbench.h2` runs them (and their TLS twins) on
nginx and h2o too, whose h2c ports speak no HTTP/1.1 for this runner's probes."""
WORKLOADS.extend(H2_WORKLOADS)

WS_PATH = "/ws/echo"
SSE_PATH = "/pages/tour/live"
"""The demo's event stream of new comments on the seeded page: a quiet SSE subscriber."""
WS_WORKLOADS: list[Workload] = [
    Workload("ws-echo-20", WS_PATH, "wsload", _exactly(b""), "WebSocket echo of 20-byte messages, 100 connections",
             size=20, probe=False, default=False),
    Workload("ws-echo-16k", WS_PATH, "wsload", _exactly(b""), "WebSocket echo of 16 KiB messages, 100 connections",
             size=16 * 1024, probe=False, default=False),
    Workload("ws-echo-16k-deflate", WS_PATH, "wsload", _exactly(b""),
             "WebSocket echo of 16 KiB messages with permessage-deflate, 100 connections",
             size=16 * 1024, deflate=True, probe=False, quick=False, default=False),
    Workload("ws-idle-10k", WS_PATH, "ws-idle", _exactly(b""), "memory with 10,000 idle WebSockets", probe=False, default=False),
    Workload("sse-idle-10k", SSE_PATH, "idle", _exactly(b""), "memory with 10,000 quiet SSE subscribers",
             probe=False, quick=False, default=False),
]  # fmt: skip
"""Issue 23's WebSocket and SSE workloads; only run when named (`--workloads ws`): a peer needs an
echo endpoint on /ws/echo for them."""
WORKLOADS.extend(WS_WORKLOADS)

BY_NAME = {w.name: w for w in WORKLOADS}

GROUPS: dict[str, list[str]] = {
    "database": ["db", "queries", "fortunes", "updates"],
    "h2": [w.name for w in H2_WORKLOADS],
    "ws": [w.name for w in WS_WORKLOADS],
    # Blocking and async side by side at each step, so that drift hits both alike.
    "mix-table": [mix_name(m, e, c) for e in MIX_EVERIES for c in MIX_CONNS for m in MIX_MODES],
}
"""Names `--workloads` accepts for a set of workloads (the TechEmpower database four, the whole
mix table); a group may not share a workload's name."""
