"""What an SSE subscriber costs a server, counted rather than timed where it can be (issue 23),
so that it can be run on a busy machine.

    cd bench && python3 -m kilnbench.ssecost --server kiln --binary .build/kiln/kiln-demo
    cd bench && python3 -m kilnbench.ssecost --server axum-sse --binary .build/axum-sse/release/peer-axum-sse

`--measure` (comma-separated, default `instructions,syscalls,idle`):
- instructions: user-space instructions per delivered event, every thread, counted by
  callgrind (this VM has no hardware counters for `perf stat`) from sseload's `ready` to
  its report line; `--subscribers` (1,000) x `--events` (10).
- syscalls: system calls per delivered event over the same span, by `strace -f -c`
  (attached a second after `ready`: the first event may be partly missed).
- cpu / profile: server user and system CPU seconds per delivered event from /proc
  (timed: noisy on a shared machine); `profile` also records `perf record -e cpu-clock -g`
  into /tmp/ssecost-<server>.perf.data.
- idle: RSS growth per subscriber: `--idle-subscribers` (10,000) event streams opened by
  `kilnbench.idle` (one `GET` each, the head read) and held; the server's RSS `--settle`
  seconds after the last opened, minus its RSS before, divided by their number.

The server runs on CPU 0 with one worker, `bench/sseload` (built by `kilnbench.sse`) on CPU 1.
Every phase is bounded in time; the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import procfs
from .idle import open_idle
from .instructions import callgrind_total
from .parse import json_report
from .runner import free_port
from .sidecar import raise_fd_limit

ROOT = Path(__file__).resolve().parents[2]
KILN_DB = ROOT / "bench/.build/sse/kiln.sqlite"


def launch(server: str, binary: Path, port: int, wrap: list[str] | None = None) -> subprocess.Popen[bytes]:
    if server == "kiln":
        KILN_DB.parent.mkdir(parents=True, exist_ok=True)
        argv = [str(binary), "--workers", "1", "--listen", f"127.0.0.1:{port}", "--access-log", "off",
                "--database", f"sqlite://{KILN_DB}"]  # fmt: skip
        env = dict(os.environ)
    else:
        argv = [str(binary)]
        env = {**os.environ, "PORT": str(port)}
    return subprocess.Popen(["taskset", "-c", "0", *(wrap or []), *argv], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip


def wait_up(port: int, deadline_s: float = 120) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(b"GET /pong HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if s.recv(64).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("server did not come up")


def fanout(pid: int, port: int, subscribers: int, events: int, counter: list[str], start: list[str]) -> tuple[dict[str, float], str]:
    """Runs sseload; `start` (then SIGINT to it) or `counter` on/dump commands bracket its publishes."""
    sseload = ROOT / "bench/.build/sseload/sseload"
    command = ["taskset", "-c", "1", str(sseload), str(port), str(subscribers), str(events)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as load:
        assert load.stdout is not None
        load.stdout.readline()  # ready
        times = [user_sys(pid)]
        watcher = None
        if counter:
            subprocess.run([*counter, "--instr=on", str(pid)], check=True, capture_output=True)
        else:
            watcher = subprocess.Popen([*start, "-p", str(pid)], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
            time.sleep(1)
        report = json_report(load.stdout.readline(), "sseload", {"delivered", "missing", "p99_ms"})
        times.append(user_sys(pid))
        if counter:
            subprocess.run([*counter, "--dump", str(pid)], check=True, capture_output=True)
            out = ""
        else:
            assert watcher is not None
            watcher.send_signal(signal.SIGINT)
            _, out = watcher.communicate(timeout=30)
        load.communicate(timeout=60 + 11 * events)
    report["user_s"] = times[1][0] - times[0][0]
    report["sys_s"] = times[1][1] - times[0][1]
    return report, out


def instructions(server: str, binary: Path, subscribers: int, events: int) -> dict[str, object]:
    """User-space instructions per delivered event, counted by callgrind (every thread)."""
    with tempfile.TemporaryDirectory(prefix="ssecost-") as tmp:
        out = Path(tmp) / "callgrind.out"
        port = free_port()
        wrap = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
        proc = launch(server, binary, port, wrap)
        try:
            wait_up(port)
            report, _ = fanout(proc.pid, port, subscribers, events, ["callgrind_control"], [])
            # The `--dump` bracketing the publishes is `callgrind.out.1`; `callgrind.out` itself is
            # written at exit with what ran after it (the shutdown), newest yet not the one to count.
            total = callgrind_total((Path(tmp) / "callgrind.out.1").read_text(errors="replace"))
        finally:
            stop(proc)
    delivered = max(int(report["delivered"]), 1)
    return {"delivered": delivered, "missing": report["missing"], "instructions_per_delivery": round(total / delivered)}


def syscalls(server: str, binary: Path, subscribers: int, events: int) -> dict[str, object]:
    """System calls per delivered event, counted by `strace -c` (every thread)."""
    port = free_port()
    proc = launch(server, binary, port)
    try:
        wait_up(port)
        report, out = fanout(proc.pid, port, subscribers, events, [], ["strace", "-f", "-c"])
    finally:
        stop(proc)
    delivered = max(int(report["delivered"]), 1)
    calls = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
            calls[f[-1]] = int(f[3])
    per = {k: round(v / delivered, 3) for k, v in sorted(calls.items(), key=lambda kv: -kv[1]) if v / delivered >= 0.001}
    return {"delivered": delivered, "missing": report["missing"], "syscalls_per_delivery": round(sum(calls.values()) / delivered, 3), "by_call": per}


def user_sys(pid: int) -> tuple[float, float]:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def cpu(server: str, binary: Path, subscribers: int, events: int, profile: Path | None) -> dict[str, object]:
    """Server CPU per delivered event, user and system apart (timed: noisy on a shared
    machine); with `profile`, a `perf record -e cpu-clock -g` of the publishes there."""
    port = free_port()
    proc = launch(server, binary, port)
    try:
        wait_up(port)
        recorder = ["perf", "record", "-e", "cpu-clock", "-g", "-o", str(profile)] if profile else ["true"]
        report, _ = fanout(proc.pid, port, subscribers, events, [], recorder)
    finally:
        stop(proc)
    delivered = max(int(report["delivered"]), 1)
    return {"delivered": delivered, "missing": report["missing"], "p99_ms": report["p99_ms"],
            "user_us_per_delivery": round(1e6 * report["user_s"] / delivered, 2),
            "sys_us_per_delivery": round(1e6 * report["sys_s"] / delivered, 2)}  # fmt: skip


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def idle(pid: int, port: int, subscribers: int, path: str, settle: float, warm: int) -> dict[str, float]:
    """RSS growth per subscriber; `warm` subscribers opened and closed first, so that the
    baseline has the worker's pools and the allocator's free lists at steady state."""
    if warm:
        for s in open_idle(port, warm, path, 60)[0]:
            s.close()
    time.sleep(1)
    before = procfs.rss_kb(pid)
    kept, answered, failed = open_idle(port, subscribers, path, 120)
    time.sleep(settle)
    after = procfs.rss_kb(pid)
    for s in kept:
        s.close()
    return {"path": path, "opened": len(kept), "failed": failed, "rss_before_kb": before, "rss_after_kb": after,
            "bytes_per_subscriber": round((after - before) * 1024 / max(len(kept), 1))}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(prog="python3 -m kilnbench.ssecost", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--server", choices=["kiln", "axum-sse", "sse-floor"], required=True)
    parser.add_argument("--binary", type=Path, required=True)
    parser.add_argument("--subscribers", type=int, default=1_000, help="for the counted fan-out")
    parser.add_argument("--events", type=int, default=10)
    parser.add_argument("--idle-subscribers", type=int, default=10_000)
    parser.add_argument("--idle-path", action="append", default=None, help="event stream(s) to hold idle")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds from the last open to the RSS reading")
    parser.add_argument("--warm", type=int, default=0, help="subscribers opened and closed before the baseline")
    parser.add_argument("--measure", default="instructions,syscalls,idle")
    args = parser.parse_args()
    raise_fd_limit(2 * max(args.subscribers, args.idle_subscribers) + 1000)
    binary = args.binary.resolve()
    paths = args.idle_path or (["/bench/events", "/pages/tour/live"] if args.server == "kiln" else ["/bench/events"])
    measures = args.measure.split(",")
    for what in measures:
        if what == "instructions":
            row = instructions(args.server, binary, args.subscribers, args.events)
        elif what in ("cpu", "profile"):
            profile = Path(f"/tmp/ssecost-{args.server}.perf.data") if what == "profile" else None
            row = cpu(args.server, binary, args.subscribers, args.events, profile)
        elif what == "syscalls":
            row = syscalls(args.server, binary, args.subscribers, args.events)
        else:
            for path in paths:
                port = free_port()
                proc = launch(args.server, binary, port)
                try:
                    wait_up(port)
                    row = idle(proc.pid, port, args.idle_subscribers, path, args.settle, args.warm)
                finally:
                    stop(proc)
                print(json.dumps({"server": args.server, "measure": "idle", **row}), flush=True)
            continue
        print(json.dumps({"server": args.server, "measure": what, "subscribers": args.subscribers, **row}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
