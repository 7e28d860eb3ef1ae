"""Live views (issue 31, "Speed and memory"): kiln's `LiveView`s against dioxus-liveview
and Datastar on the same three pages (a shared counter, a 100-row table each reader sorts
and filters for themselves where one row changes, a chat room), and the floor under them
all: kiln's own WebSocket delivery of the bytes a view sends for a change, rendered once
per change (`/bench/live/floor/{page}`, app/src/bench_live/floor.rs).

    cd bench && python3 -m kilnbench.live                                          # every server, 10,000 views, 20 triggers
    cd bench && python3 -m kilnbench.live --servers kiln,floor --views 200 --triggers 3   # a smoke run

Each server is started pinned to CPU 0 with one worker; the load is `bench/liveload` (C,
one epoll thread, built here with cc) on CPU 1. Per server, one process serves every
phase:

- **idle memory**: liveload opens N counter views (each connection sends its server's
  `Recipe`: the same upgrade, or SSE GET, for all N) and waits until they are mounted
  and quiet; the server's RSS then minus its RSS before them, ÷ N, is the memory per
  idle view.
- **updates**, per page: with N views open, K triggers (POSTs) one after another, each
  waited for until every view got bytes of it and then 200 ms of quiet (10 s at most:
  the rest are missing). The server's CPU (utime + stime, /proc) from `ready` to the
  report ÷ deliveries = CPU per delivered update; bytes per update are the bytes on the
  wire (frames, or SSE chunks) each view got per trigger; latency runs from the POST's
  send to a view's first byte of it (the client reads N sockets on one core: it is in
  the figure). The counter's updates go to the views of the memory phase.

kiln's recipe GETs the page once and opens every socket with its token
(`Sec-WebSocket-Protocol: kiln-live, <token>`) and the CSRF cookie that answer set; the
floor's is a plain upgrade, neither offering permessage-deflate. The peers' builds, launches
and recipes come from `kilnbench.live_peers` (`SERVERS`, `RECIPES`): what a browser's
connection sends (dioxus-liveview's upgrade offers permessage-deflate, as Chromium's does;
axum's WebSocket declines it, so every server's frames go uncompressed).
One rep by default (~10 minutes once built); CPU is read in clock ticks (10 ms), so a
figure is within about 1 % at 10,000 views × 20 triggers. When the better peer's CPU per
update is at or below the floor's, the summary says so: that target then lies below what
kiln's own WebSocket delivery of the same bytes costs on this machine. Results in
`bench/results/<date>-live/`, beside the issue's targets.
"""

from __future__ import annotations

import argparse
import http.client
import re
import shlex
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import procfs
from . import live_peers
from .live_recipe import Recipe
from .load import LOAD_CPU
from .parse import ParseError, json_report
from .runner import free_port
from .servers import Launch, Options, Paths, Server, Step, kiln
from .sidecar import Results, answers_200, argv_of, build, kiln_failed, median_of, raise_fd_limit, results_dir, start

KILN_DB = "bench/.build/live/kiln.sqlite"
FLOOR = "floor"
"""kiln's WebSocket delivery of a view's bytes, no view behind it: no live view can go below it."""
PEERS = ("dioxus-liveview", "datastar")
PAGES = {"counter": "bump", "table": "change", "chat": "say"}
"""Each page and its trigger (`POST /bench/live/{page}/{trigger}`)."""
CHAT_LINE = "line %d from liveload"
"""The chat trigger's body; liveload puts the trigger's number in."""
ROUND_LIMIT_S = 12
"""liveload's limit per trigger (10 s) and its 200 ms of quiet, with room: the subprocess gets that per trigger."""
SETUP_LIMIT_S = 240
"""Opening and mounting N views, at most (liveload's own limits are 120 s + 60 s)."""
IDLE_SETTLE_S = 1.0
"""Between `ready` and reading the RSS, so that what the mounts freed is given back."""
WS_KEY = "dGhlIHNhbXBsZSBub25jZQ=="


RecipeFn = Callable[[int, str], Recipe]


def upgrade(port: int, path: str, headers: str = "") -> bytes:
    """A WebSocket upgrade of `path`, with `headers` (each ending in CRLF) added."""
    return (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {WS_KEY}\r\nSec-WebSocket-Version: 13\r\nOrigin: http://127.0.0.1:{port}\r\n{headers}\r\n"
    ).encode()


def page_token(html: str, set_cookies: list[str]) -> tuple[str, str]:
    """The view's token in kiln's first answer and the Cookie header its Set-Cookies make."""
    found = re.search(r'data-kiln-token="([^"]+)"', html)
    if not found:
        raise ValueError("no data-kiln-token in the page")
    return found.group(1), "; ".join(c.split(";", 1)[0].strip() for c in set_cookies)


def kiln_recipe(port: int, page: str) -> Recipe:
    """GETs the page once; every socket then opens with its token and its CSRF cookie."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", f"/bench/live/{page}")
        answer = conn.getresponse()
        html = answer.read().decode()
        if answer.status != 200:
            raise ValueError(f"GET /bench/live/{page}: {answer.status}")
        token, cookie = page_token(html, answer.headers.get_all("Set-Cookie") or [])
    finally:
        conn.close()
    cookie_line = f"Cookie: {cookie}\r\n" if cookie else ""
    return Recipe("ws", upgrade(port, f"/bench/live/{page}", f"Sec-WebSocket-Protocol: kiln-live, {token}\r\n{cookie_line}"))


def floor_recipe(port: int, page: str) -> Recipe:
    return Recipe("ws", upgrade(port, f"/bench/live/floor/{page}"))


@dataclass(frozen=True)
class Entry:
    """A server of this run: how it starts, how a view connects, where its triggers are."""

    server: Server
    launch: Callable[[Paths, int], Launch]
    recipe: RecipeFn
    trigger_prefix: str = "/bench/live"

    def trigger(self, page: str) -> str:
        return f"{self.trigger_prefix}/{page}/{PAGES[page]}"


def entries() -> list[Entry]:
    """kiln and the floor (the same kiln-demo), then the peers live_peers gives."""
    k, floor = kiln("kiln", access_log=False), kiln(FLOOR, access_log=False)
    opts = Options(database_url=f"sqlite://{KILN_DB}")
    chosen = [
        Entry(k, lambda paths, port: k.launch(paths, port, opts), kiln_recipe),
        Entry(floor, lambda paths, port: floor.launch(paths, port, opts), floor_recipe, "/bench/live/floor"),
    ]
    for server in live_peers.SERVERS:
        recipe = live_peers.RECIPES[server.name]
        chosen.append(Entry(server, lambda paths, port, s=server: s.launch(paths, port, Options()), recipe))
    return chosen


def parse_liveload(text: str) -> dict:
    """liveload's JSON report line (the last line that is one)."""
    keys = {"mode", "connections", "opened", "failed", "triggers", "delivered", "missing", "bytes_per_delivery",
            "p50_ms", "p99_ms"}  # fmt: skip
    return json_report(text, "liveload", keys)


def parse_ready(line: str) -> tuple[int, int]:
    """liveload's `ready OPENED FAILED` line."""
    parts = line.split()
    if len(parts) != 3 or parts[0] != "ready":
        raise ParseError(f"liveload never got ready: {line.strip()[:200]!r}")
    return int(parts[1]), int(parts[2])


def _liveload(paths: Paths) -> Path:
    return paths.build / "liveload" / "liveload"


@dataclass
class Drive:
    """One liveload run: its report, the server's CPU and RSS around it, its command and output."""

    report: dict
    cpu_s: float
    rss_before_kb: int
    rss_idle_kb: int
    command: list[str]
    output: str


def drive(paths: Paths, workdir: Path, port: int, pid: int, recipe: Recipe, views: int, trigger: str,
          triggers: int, body: str) -> Drive:  # fmt: skip
    """Runs liveload pinned to the load CPU: N views, `ready`, the RSS read, then K triggers fed on stdin."""
    request = workdir / "request.http"
    request.write_bytes(recipe.request)
    command = ["taskset", "-c", LOAD_CPU, str(_liveload(paths)), "-m", recipe.mode]
    if recipe.hello is not None:
        (workdir / "hello.txt").write_bytes(recipe.hello)
        command += ["-H", str(workdir / "hello.txt")]
    command += ["-b", body, str(port), str(request), str(views), trigger]
    rss_before = procfs.rss_kb(pid)
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as child:  # fmt: skip
        assert child.stdin is not None and child.stdout is not None
        try:
            ready = _line_within(child, SETUP_LIMIT_S)
            parse_ready(ready)
            time.sleep(IDLE_SETTLE_S)
            rss_idle = procfs.rss_kb(pid)
            before = procfs.cpu_seconds(pid)
            child.stdin.write("go\n" * triggers)
            child.stdin.close()
            report = _line_within(child, 10 + triggers * ROUND_LIMIT_S)
            cpu = procfs.cpu_seconds(pid) - before
            rest = child.stdout.read()  # it exits once it has reported
            child.wait(timeout=10)
        except (subprocess.TimeoutExpired, ParseError):
            child.kill()
            raise
    return Drive(parse_liveload(report), cpu, rss_before, rss_idle, command, ready + report + rest)


def _line_within(child: subprocess.Popen, limit_s: float) -> str:
    """The child's next stdout line, or TimeoutExpired once `limit_s` passed."""
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(child.stdout.readline()), daemon=True)
    reader.start()
    reader.join(limit_s)
    if not line:
        raise subprocess.TimeoutExpired(child.args, limit_s)
    return line[0]


def row_dynamic_bytes(triggers: int) -> float:
    """The mean size of the changed row's dynamic parts over `triggers` table changes:
    the id (twice: its cell and `player-<id>`), the new score and the team number, as the
    view's template splits them (app/src/bench_live/table.rs)."""
    sizes = []
    for n in range(max(triggers, 1)):
        row = n % 100 + 1
        score = row + n // 100 + 1
        sizes.append(2 * len(str(row)) + len(str(score)) + len(str(row % 7)))
    return statistics.mean(sizes)


FIELDS = ["server", "page", "rep", "status", "views", "failed", "closed", "mount_bytes_per_view", "rss_before_kb",
          "rss_idle_kb", "idle_kib_per_view", "triggers", "trigger_errors", "delivered", "missing",
          "bytes_per_delivery", "p50_ms", "p99_ms", "max_ms", "cpu_s", "cpu_us_per_delivery", "command"]  # fmt: skip


def _ok(rows: list[dict[str, object]], server: str, page: str) -> list[dict[str, object]]:
    return [r for r in rows if r["server"] == server and r["page"] == page and r["status"] == "ok"]


def _median(rows: list[dict[str, object]], server: str, page: str, key: str) -> float | None:
    return median_of(_ok(rows, server, page), key)


def _better_peer(rows: list[dict[str, object]], page: str, key: str) -> tuple[str, float] | None:
    """The peer with the lowest median `key` on `page`, and that median."""
    found = [(name, v) for name in PEERS if (v := _median(rows, name, page, key)) is not None]
    return min(found, key=lambda f: f[1]) if found else None


def _verdict(value: float | None, bound: float | None, strict: bool = False) -> str:
    if value is None or bound is None:
        return "not measured"
    met = value < bound if strict else value <= bound
    return "**met**" if met else "**not met**"


def targets(rows: list[dict[str, object]], triggers: int) -> list[str]:
    """The issue's targets, each with kiln's figure and the bound it is held to."""
    lines = ["| target | bound | kiln | verdict |", "|---|---:|---:|---|"]
    idle = _median(rows, "kiln", "counter", "idle_kib_per_view")
    lines.append(f"| idle view ≤ 4 KiB | 4.00 KiB | {_num(idle)} KiB | {_verdict(idle, 4.0)} |")
    peer = _better_peer(rows, "counter", "idle_kib_per_view")
    bound = peer[1] / 3 if peer else None
    who = f" ({peer[0]} {peer[1]:.2f} ÷ 3)" if peer else " (no peer measured)"
    lines.append(f"| idle view ≤ ⅓ of the better peer's | {_num(bound)} KiB{who} | {_num(idle)} KiB | {_verdict(idle, bound)} |")
    socket = _median(rows, FLOOR, "counter", "idle_kib_per_view")
    beyond = idle - socket if idle is not None and socket is not None else None
    lines.append(f"| (not a target) idle view beyond the floor's bare WebSocket | floor {_num(socket)} KiB | "
                 f"{_num(beyond)} KiB more | |")  # fmt: skip
    for page in PAGES:
        cpu = _median(rows, "kiln", page, "cpu_us_per_delivery")
        floor = _median(rows, FLOOR, page, "cpu_us_per_delivery")
        bound = 1.3 * floor if floor is not None else None
        lines.append(f"| {page}: CPU per update ≤ 1.3 × floor | {_num(bound)} µs (floor {_num(floor)}) | "
                     f"{_num(cpu)} µs | {_verdict(cpu, bound)} |")  # fmt: skip
        peer = _better_peer(rows, page, "cpu_us_per_delivery")
        who = f"{peer[0]} {peer[1]:.2f}" if peer else "no peer measured"
        verdict = _verdict(cpu, peer[1] if peer else None, strict=True)
        if peer and floor is not None and peer[1] <= floor:
            # The escape: a bound no server of kiln's can pass on this machine is said so.
            verdict += f": the peer is at or below the floor ({floor:.2f} µs), which no live view goes under"
        lines.append(f"| {page}: CPU per update < the better peer's | {who} µs | {_num(cpu)} µs | {verdict} |")
        sent = _median(rows, "kiln", page, "bytes_per_delivery")
        peer = _better_peer(rows, page, "bytes_per_delivery")
        who = f"{peer[0]} {peer[1]:.1f}" if peer else "no peer measured"
        if page == "table":
            dynamic = row_dynamic_bytes(triggers)
            lines.append(f"| table: bytes per update ≤ the row's dynamic parts + 32 | {dynamic + 32:.1f} B "
                         f"({dynamic:.1f} + 32) | {_num(sent, 1)} B | {_verdict(sent, dynamic + 32)} |")  # fmt: skip
            lines.append(f"| table: bytes per update ≥ 5× fewer than the better peer's | {_num(peer[1] / 5 if peer else None, 1)} B "
                         f"({who} ÷ 5) | {_num(sent, 1)} B | {_verdict(sent, peer[1] / 5 if peer else None)} |")  # fmt: skip
        else:
            lines.append(f"| {page}: bytes per update ≤ the better peer's | {who} B | {_num(sent, 1)} B | "
                         f"{_verdict(sent, peer[1] if peer else None)} |")  # fmt: skip
    return lines


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def summarise(rows: list[dict[str, object]], triggers: int) -> str:
    """The memory table, the per-page update table (medians over reps) and the targets."""
    servers = list(dict.fromkeys(str(r["server"]) for r in rows))
    out = ["## Memory per idle view (counter)", "",
           "| server | views | RSS before MiB | RSS with the views MiB | KiB per idle view |", "|---|---:|---:|---:|---:|"]  # fmt: skip
    for name in servers:
        ok = _ok(rows, name, "counter")
        if not ok:
            out.append(f"| {name} | {_status(rows, name, 'counter')} | | | |")
            continue
        med = {k: median_of(ok, k) or 0.0 for k in ("views", "rss_before_kb", "rss_idle_kb", "idle_kib_per_view")}
        out.append(f"| {name} | {med['views']:,.0f} | {med['rss_before_kb'] / 1024:.1f} | {med['rss_idle_kb'] / 1024:.1f} | "
                   f"{med['idle_kib_per_view']:.2f} |")  # fmt: skip
    out += ["", "## One change to every open view", "",
            "| page | server | views | delivered | missing | server CPU µs per update | ÷ floor | bytes per update | "
            "p50 ms | p99 ms | first message bytes |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for page in PAGES:
        floor = _median(rows, FLOOR, page, "cpu_us_per_delivery")
        for name in servers:
            ok = _ok(rows, name, page)
            if not ok:
                out.append(f"| {page} | {name} | {_status(rows, name, page)} | | | | | | | | |")
                continue
            med = {k: median_of(ok, k) or 0.0 for k in ("views", "delivered", "missing", "cpu_us_per_delivery",
                                                        "bytes_per_delivery", "p50_ms", "p99_ms", "mount_bytes_per_view")}  # fmt: skip
            ratio = f"{med['cpu_us_per_delivery'] / floor:.2f}x" if floor and name != FLOOR else ""
            out.append(f"| {page} | {name} | {med['views']:,.0f} | {med['delivered']:,.0f} | {med['missing']:,.0f} | "
                       f"{med['cpu_us_per_delivery']:.2f} | {ratio} | {med['bytes_per_delivery']:.1f} | "
                       f"{med['p50_ms']:.2f} | {med['p99_ms']:.2f} | {med['mount_bytes_per_view']:,.0f} |")  # fmt: skip
    out += ["", "## The issue's targets (kiln's medians)", "", *targets(rows, triggers)]
    return "\n".join(out) + "\n"


def _status(rows: list[dict[str, object]], server: str, page: str) -> str:
    mine = [r for r in rows if r["server"] == server and r["page"] == page]
    return str(mine[0]["status"]) if mine else "not run"


def measure(p: Paths, entry: Entry, port: int, pid: int, page: str, args: argparse.Namespace, logs: Path,
            rep: int) -> dict[str, object]:  # fmt: skip
    """One page of one server: its row."""
    name = entry.server.name
    row: dict[str, object] = {"server": name, "page": page, "rep": rep, "status": "ok"}
    workdir = p.build / "liveload" / f"{name}-{page}"
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        recipe = entry.recipe(port, page)
        body = CHAT_LINE if page == "chat" else ""
        d = drive(p, workdir, port, pid, recipe, args.views, entry.trigger(page), args.triggers, body)
    except (ParseError, subprocess.TimeoutExpired, OSError, ValueError, http.client.HTTPException) as e:
        return {**row, "status": f"load failed: {e}"[:200]}
    (logs / f"{name}-{page}-{rep}.txt").write_text(shlex.join(d.command) + "\n" + d.output)
    r = d.report
    delivered = int(r["delivered"])
    row.update(views=r["opened"], failed=r["failed"], closed=r["closed"], mount_bytes_per_view=r["mount_bytes_per_connection"],
               rss_before_kb=d.rss_before_kb, rss_idle_kb=d.rss_idle_kb, triggers=r["triggers"],
               trigger_errors=r["trigger_errors"], delivered=delivered, missing=r["missing"],
               bytes_per_delivery=r["bytes_per_delivery"], p50_ms=r["p50_ms"], p99_ms=r["p99_ms"], max_ms=r["max_ms"],
               cpu_s=round(d.cpu_s, 3), cpu_us_per_delivery=round(1e6 * d.cpu_s / max(delivered, 1), 3),
               command=shlex.join(d.command))  # fmt: skip
    if page == "counter" and r["opened"]:
        row["idle_kib_per_view"] = round((d.rss_idle_kb - d.rss_before_kb) / r["opened"], 3)
    if r["opened"] < args.views or r["trigger_errors"]:
        row["status"] = f"opened {r['opened']} of {args.views}, {r['trigger_errors']} trigger errors"
    return row


def build_all(p: Paths, chosen: list[Entry]) -> dict[str, str]:
    """Builds liveload and every chosen server (each step once); the servers whose build failed, and why."""
    (p.build / "liveload").mkdir(parents=True, exist_ok=True)
    loadgen = Step(["cc", "-O2", "-o", str(_liveload(p)), str(p.bench / "liveload" / "liveload.c")], p.root)
    build(p, [loadgen])
    failed: dict[str, str] = {}
    done: set[tuple[str, ...]] = set()
    for entry in chosen:
        steps = [s for s in entry.server.build(p) if tuple(s.argv) not in done]
        try:
            build(p, steps)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
            failed[entry.server.name] = f"build failed: {e}"[:200]
        done |= {tuple(s.argv) for s in steps}
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m kilnbench.live", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--servers", default=",".join(("kiln", FLOOR, *PEERS)))
    parser.add_argument("--views", type=int, default=10_000)
    parser.add_argument("--triggers", type=int, default=20)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args(argv)
    p = Paths(Path(__file__).resolve().parents[2])
    out = results_dir(p, "live", args.out)
    logs = out / "logs"
    raise_fd_limit(2 * args.views + 1000)
    (p.root / KILN_DB).parent.mkdir(parents=True, exist_ok=True)
    names = args.servers.split(",")
    known = {e.server.name: e for e in entries()}
    chosen = [known[n] for n in names if n in known]
    results = Results("live", FIELDS)
    for name in names:
        if name not in known:
            for page in PAGES:
                results.add({"server": name, "page": page, "rep": 0, "status": "not available (no live_peers entry)"})
    broken = {} if args.no_build else build_all(p, chosen)
    for name, why in broken.items():
        print(f"{name}: {why}", flush=True)
        for page in PAGES:
            results.add({"server": name, "page": page, "rep": 0, "status": why})
    chosen = [e for e in chosen if e.server.name not in broken]
    for rep in range(args.reps):
        for entry in chosen[rep % len(chosen):] + chosen[: rep % len(chosen)] if chosen else []:
            name = entry.server.name
            port = free_port()
            started = start(entry.server, entry.launch(p, port), port, logs / f"{name}.log", answers_200("/bench/live/counter"))
            try:
                if started.failure:
                    for page in PAGES:
                        results.add({"server": name, "page": page, "rep": rep, "status": started.failure[:200]})
                    continue
                for page in PAGES:
                    row = measure(p, entry, port, started.process.pid, page, args, logs, rep)
                    results.add(row)
                    print(f"rep {rep} {name:16} {page:8} {row['status']} delivered {row.get('delivered')} missing "
                          f"{row.get('missing')} {row.get('cpu_us_per_delivery')} µs CPU/update "
                          f"{row.get('bytes_per_delivery')} B/update idle {row.get('idle_kib_per_view', '')} KiB/view", flush=True)  # fmt: skip
                    time.sleep(1)  # the last page's connections closed before the next opens
            finally:
                started.process.stop()
    summary = summarise(results.rows, args.triggers)
    results.write(out, summary, {e.server.name: e.server.version(p) for e in chosen}, argv_of(argv), notes=__doc__ or "")
    print(summary)
    return 1 if kiln_failed(results.rows, names) else 0


if __name__ == "__main__":
    sys.exit(main())
