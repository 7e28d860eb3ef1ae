"""SSE fan-out (issue 23): one publish delivered over Server-Sent Events to 10,000
subscribers on one core, kiln (`kiln::realtime::{Sse, Bus}`, the demo's `/bench/events`
and `/bench/publish`) vs axum's `Sse` over a `tokio::sync::broadcast` channel
(`bench/peers/axum-sse`), and the floor under both: `sse-floor` (`bench/peers/sse-floor`, C,
one epoll loop) renders each event once into kiln's bytes and writes it to every subscriber
with one write(), so no server can deliver for less CPU on this kernel.

    cd bench && python3 -m kilnbench.sse                                     # 3 reps, 10,000 subscribers, 50 events, all three
    cd bench && python3 -m kilnbench.sse --reps 1 --subscribers 200 --events 3   # a smoke run

The load is `bench/sseload` (C, epoll, built here with cc): it opens the subscribers (256
connecting at once), prints `ready`, then publishes one event at a time (a POST whose body
is its sequence number and send time, CLOCK_MONOTONIC), waits until every subscriber has
it (10 s at most; the rest count as missing), pauses 20 ms and publishes the next. Each
delivery's latency is the receive time minus the send time carried in the event, so it
includes the POST's trip and the client's own reading of 10,000 sockets on one core. The
server's CPU (utime + stime from /proc) is counted from `ready` to the report line, so the
connection set-up is not in it; `CPU µs per delivery` = that ÷ events delivered. RLIMIT_NOFILE
is raised for the server and the client alike. Results in `bench/results/<date>-sse/`.

`CPU ÷ sse-floor` is each server's CPU per delivery over the floor's: since no server goes
below the floor, axum-sse's figure there is the most that kiln could be ahead of axum on
this kernel (issue 23 asks for 1.5×).
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from pathlib import Path

from . import procfs
from .load import LOAD_CPU
from .parse import ParseError, json_report
from .runner import free_port
from .servers import Options, Paths, Server, Step, c_peer, cargo_peer, kiln
from .sidecar import Results, answers_200, argv_of, build, kiln_failed, median_of, raise_fd_limit, results_dir, start

KILN_DB = "bench/.build/sse/kiln.sqlite"
FLOOR = "sse-floor"
"""The server no other can beat: the `CPU ÷ sse-floor` column is each one's distance from it."""
ROUND_LIMIT_S = 10
"""sseload's own limit per event: the subprocess gets that per event, and more, before it is killed."""


def parse_sseload(text: str) -> dict[str, float]:
    """sseload's JSON report line (the last line that is one)."""
    return json_report(text, "sseload", {"subscribers", "events", "delivered", "missing", "p50_ms", "p99_ms"})


def probe_fanout(port: int) -> str | None:
    """None if a subscriber of `/bench/events` receives what `/bench/publish` publishes."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sub:
            sub.sendall(b"GET /bench/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            seen = b""
            while b"\r\n\r\n" not in seen:
                chunk = sub.recv(4096)
                if not chunk:
                    return "the event stream closed before its head"
                seen += chunk
            if not seen.startswith(b"HTTP/1.1 200") or b"text/event-stream" not in seen.lower():
                return f"GET /bench/events: {seen[:60]!r}"
            with socket.create_connection(("127.0.0.1", port), timeout=5) as pub:
                body = b"7 123456"
                head = f"POST /bench/publish HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                pub.sendall(head.encode() + body)
                answer = pub.recv(4096)
                if not answer.startswith(b"HTTP/1.1 200"):
                    return f"POST /bench/publish: {answer[:60]!r}"
            deadline = time.monotonic() + 5
            while b"data: 7 123456" not in seen and time.monotonic() < deadline:
                seen += sub.recv(4096)
            return None if b"data: 7 123456" in seen else "the published event never arrived"
    except OSError as e:
        return f"probe failed: {e}"


def _sseload(paths: Paths) -> Path:
    return paths.build / "sseload" / "sseload"


def sse_floor() -> Server:
    """The fan-out floor (bench/peers/sse-floor/sse_floor.c): kiln's event bytes, one write() per
    subscriber, nothing else."""
    return c_peer(
        FLOOR,
        "sse-floor/sse_floor.c",
        "C epoll loop: each publish rendered once into kiln's chunk, one write() per subscriber, no validation",
    )

def entries() -> list[tuple[Server, object]]:
    k = kiln("kiln", access_log=False)
    axum = cargo_peer("axum-sse", "peer-axum-sse", ("axum", "tokio"), "axum Sse + tokio::sync::broadcast, current-thread runtime")
    floor = sse_floor()
    return [
        (k, lambda paths, port: k.launch(paths, port, Options(database_url=f"sqlite://{KILN_DB}"))),
        (axum, lambda paths, port: axum.launch(paths, port, Options())),
        (floor, lambda paths, port: floor.launch(paths, port, Options())),
    ]


def drive(paths: Paths, port: int, pid: int, subscribers: int, events: int) -> tuple[dict[str, float], float, list[str], str]:
    """Runs sseload pinned to the load CPU: (its report, server CPU seconds from `ready` on, command, output)."""
    command = ["taskset", "-c", LOAD_CPU, str(_sseload(paths)), str(port), str(subscribers), str(events)]
    limit = 60 + events * (ROUND_LIMIT_S + 1)
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as child:
        assert child.stdout is not None
        try:
            ready = child.stdout.readline()
            before = procfs.cpu_seconds(pid)
            report = child.stdout.readline()
            cpu = procfs.cpu_seconds(pid) - before
            rest, _ = child.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            child.kill()
            raise
    output = ready + report + rest
    return parse_sseload(report), cpu, command, output


FIELDS = ["server", "workload", "rep", "status", "subscribers", "events", "delivered", "missing", "errors", "p50_ms",
          "p99_ms", "max_ms", "round_p50_ms", "deliveries_per_s", "cpu_s", "cpu_us_per_delivery", "command"]  # fmt: skip


def summarise(rows: list[dict[str, object]]) -> str:
    lines = ["| server | subscribers | delivered | missing | p50 ms | p99 ms | publish → last subscriber (median) | "
             "deliveries/s | server CPU µs per delivery | CPU other ÷ kiln | CPU ÷ sse-floor |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    kiln_cpu = median_of([r for r in rows if r["server"] == "kiln" and r["status"] == "ok"], "cpu_us_per_delivery")
    floor_cpu = median_of([r for r in rows if r["server"] == FLOOR and r["status"] == "ok"], "cpu_us_per_delivery")
    for name in dict.fromkeys(str(r["server"]) for r in rows):
        mine = [r for r in rows if r["server"] == name]
        ok = [r for r in mine if r["status"] == "ok"]
        if not ok:
            lines.append(f"| {name} | {mine[0]['status']} | | | | | | | | | |")
            continue
        med = {k: median_of(ok, k) or 0.0 for k in ("subscribers", "delivered", "missing", "p50_ms", "p99_ms",
                                                    "round_p50_ms", "deliveries_per_s", "cpu_us_per_delivery")}  # fmt: skip
        ratio = f"{med['cpu_us_per_delivery'] / kiln_cpu:.2f}x" if kiln_cpu and med["cpu_us_per_delivery"] and name != "kiln" else ""
        of_floor = f"{med['cpu_us_per_delivery'] / floor_cpu:.2f}x" if floor_cpu and name != FLOOR else ""
        lines.append(f"| {name} | {med['subscribers']:,.0f} | {med['delivered']:,.0f} | {med['missing']:,.0f} | "
                     f"{med['p50_ms']:.2f} | {med['p99_ms']:.2f} | {med['round_p50_ms']:.2f} ms | "
                     f"{med['deliveries_per_s']:,.0f} | {med['cpu_us_per_delivery']:.2f} | {ratio} | {of_floor} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m kilnbench.sse", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--subscribers", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=50)
    parser.add_argument("--servers", default="kiln,axum-sse,sse-floor")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args(argv)
    p = Paths(Path(__file__).resolve().parents[2])
    out = results_dir(p, "sse", args.out)
    raise_fd_limit(2 * args.subscribers + 1000)
    (p.root / KILN_DB).parent.mkdir(parents=True, exist_ok=True)
    chosen = [e for e in entries() if e[0].name in args.servers.split(",")]
    if not args.no_build:
        (p.build / "sseload").mkdir(parents=True, exist_ok=True)
        loadgen = Step(["cc", "-O2", "-o", str(_sseload(p)), str(p.bench / "sseload" / "sseload.c")], p.root)
        build(p, [loadgen, *(s for server, _ in chosen for s in server.build(p))])
    results = Results("sse", FIELDS)
    logs = out / "logs"
    workload = f"fanout-{args.subscribers}"
    for rep in range(args.reps):
        for server, launch in chosen[rep % len(chosen):] + chosen[: rep % len(chosen)]:
            port = free_port()
            started = start(server, launch(p, port), port, logs / f"{server.name}.log", answers_200("/pong"))
            row: dict[str, object] = {"server": server.name, "workload": workload, "rep": rep, "status": "ok"}
            try:
                why = started.failure or probe_fanout(port)
                if why:
                    results.add({**row, "status": why})
                    print(f"rep {rep} {server.name:10} {why}")
                    continue
                try:
                    report, cpu, command, output = drive(p, port, started.process.pid, args.subscribers, args.events)
                except (ParseError, subprocess.TimeoutExpired, OSError) as e:
                    results.add({**row, "status": f"load failed: {e}"})
                    continue
                (logs / f"{server.name}-{workload}-{rep}.txt").write_text(" ".join(command) + "\n" + output)
                delivered = int(report["delivered"])
                round_s = float(report["round_p50_ms"]) / 1000
                row.update({k: report[k] for k in ("subscribers", "events", "delivered", "missing", "errors", "p50_ms",
                                                   "p99_ms", "max_ms", "round_p50_ms")},  # fmt: skip
                           deliveries_per_s=round(report["subscribers"] / round_s) if round_s else 0,
                           cpu_s=round(cpu, 3), cpu_us_per_delivery=round(1e6 * cpu / max(delivered, 1), 3),
                           command=" ".join(command))  # fmt: skip
                results.add(row)
                print(f"rep {rep} {server.name:10} delivered {delivered:,} missing {report['missing']} "
                      f"p50 {report['p50_ms']} ms p99 {report['p99_ms']} ms {row['cpu_us_per_delivery']} µs CPU/delivery", flush=True)  # fmt: skip
            finally:
                started.process.stop()
    summary = summarise(results.rows)
    results.write(out, summary, {s.name: s.version(p) for s, _ in chosen}, argv_of(argv), notes=__doc__ or "")
    print(summary)
    return 1 if kiln_failed(results.rows, [s.name for s, _ in chosen]) else 0


if __name__ == "__main__":
    sys.exit(main())
