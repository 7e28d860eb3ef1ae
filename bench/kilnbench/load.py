"""Runs the load generators, pinned to CPU 1, each bounded in time.

Every function returns a `Measurement` (parsed numbers, the exact command, the
raw output) or raises `LoadError`. A run that overstays its limit is killed.
"""

from __future__ import annotations

import json
import re
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .parse import LoadResult, ParseError, parse_ab, parse_h2load, parse_httperf, parse_wrk, parse_wsload

LOAD_CPU = "1"
"""The CPU every load generator is pinned to; the server has CPU 0."""

GRACE_S = 30
"""Extra seconds a load generator gets past its nominal duration before it is killed."""

WRK_TIMEOUT = "10s"
"""wrk's per-request timeout: long enough for a 1000x50 bigtable queued behind 99 others."""

PIPELINE_SCRIPT = Path(__file__).with_name("pipeline.lua")


@dataclass(frozen=True)
class Settings:
    """How long and how hard each workload runs."""

    duration_s: int = 10
    warmup_s: int = 2
    ab_requests: int = 100_000
    httperf_rate: int = 1000
    """New connections per second; each carries `httperf_calls` requests."""
    httperf_calls: int = 10
    idle_conns: int = 10_000
    pipeline_depth: int = 16
    ab_time_limit_s: int | None = None
    """If set, ab stops after this many seconds even short of its -n (ab's -t), so that a slow
    server cannot stretch a run of 100,000 requests; the report tables set it."""


@dataclass
class Measurement:
    result: LoadResult
    command: list[str]
    output: str


class LoadError(RuntimeError):
    """The load generator failed, timed out or printed no report."""

    def __init__(self, message: str, command: list[str], output: str = ""):
        super().__init__(message)
        self.command = command
        self.output = output


def _pinned(argv: list[str]) -> list[str]:
    return ["taskset", "-c", LOAD_CPU, *argv]


def _run(argv: list[str], limit_s: float, parse: Callable[[str], LoadResult]) -> Measurement:
    command = _pinned(argv)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit_s, check=False)
    except subprocess.TimeoutExpired as e:
        output = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        raise LoadError(f"{argv[0]} killed after {limit_s:.0f}s", command, output) from None
    output = done.stdout + done.stderr
    try:
        return Measurement(parse(output), command, output)
    except ParseError as e:
        raise LoadError(str(e), command, output) from None


def wrk(port: int, path: str, conns: int, duration_s: int, pipeline_depth: int = 0) -> Measurement:
    """`wrk -t1 -cN -dTs --latency`, pipelined through pipeline.lua if `pipeline_depth`."""
    argv = ["wrk", "-t1", f"-c{conns}", f"-d{duration_s}s", "--timeout", WRK_TIMEOUT, "--latency"]
    if pipeline_depth:
        argv += ["-s", str(PIPELINE_SCRIPT)]
    argv.append(f"http://127.0.0.1:{port}{path}")
    if pipeline_depth:
        argv += ["--", str(pipeline_depth)]
    return _run(argv, duration_s + GRACE_S, parse_wrk)


def h2load(port: int, path: str, conns: int, streams: int, duration_s: int) -> Measurement:
    """HTTP/2 with prior knowledge (h2c): `h2load -c C -m M -D T`, one thread, M streams in
    flight on each of the C connections."""
    argv = ["h2load", f"-c{conns}", f"-m{streams}", "-D", str(duration_s), f"http://127.0.0.1:{port}{path}"]
    return _run(argv, duration_s + GRACE_S, parse_h2load)


def ab(port: int, path: str, conns: int, requests: int, time_limit_s: int | None = None) -> Measurement:
    """The hello-world round-up: `ab -r -k -n N -c C`, with `-t T` first if `time_limit_s`
    (ab's -t sets -n to 50,000, so -n must come after it)."""
    capped = ["-t", str(time_limit_s)] if time_limit_s else []
    argv = ["ab", "-r", "-k", *capped, "-n", str(requests), "-c", str(conns), "-s", "10", f"http://127.0.0.1:{port}{path}"]
    # Even a slow server (1,000 req/s) finishes 100,000 requests in 100 s.
    limit = min(requests / 1000, time_limit_s) if time_limit_s else requests / 1000
    return _run(argv, limit + GRACE_S, parse_ab)


def httperf(port: int, path: str, settings: Settings) -> Measurement:
    """A fixed-rate run: `httperf --rate R --num-calls C` for `duration_s` seconds of connections."""
    argv = [
        "httperf", "--hog", "--server", "127.0.0.1", "--port", str(port), "--uri", path,
        "--rate", str(settings.httperf_rate),
        "--num-conns", str(settings.httperf_rate * settings.duration_s),
        "--num-calls", str(settings.httperf_calls),
        "--timeout", "5",
    ]  # fmt: skip
    return _run(argv, settings.duration_s + GRACE_S, parse_httperf)


SNAP_HTTPERF = {"num-conns": 1000, "num-calls": 1000, "burst-length": 20, "rate": 1000}
"""The Snap report's httperf settings: 1,000 connections opened at 1,000 a second, each sending
1,000 requests pipelined 20 at a time (a million requests in all)."""


def httperf_burst(port: int, path: str, cap_s: int) -> Measurement:
    """The Snap report's httperf run, interrupted with SIGINT after `cap_s` seconds if it has not
    finished: httperf then prints its report over what it did, as it did for the report's authors."""
    argv = ["httperf", "--hog", "--server", "127.0.0.1", "--port", str(port), "--uri", path, "--timeout", "5"]
    argv += [f"--{k}={v}" for k, v in SNAP_HTTPERF.items()]
    command = _pinned(argv)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = process.communicate(timeout=cap_s)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGINT)
        try:
            output, _ = process.communicate(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
            raise LoadError(f"httperf ignored SIGINT for {GRACE_S}s", command, output) from None
    try:
        return Measurement(parse_httperf(output), command, output)
    except ParseError as e:
        raise LoadError(str(e), command, output) from None


def idle(port: int, path: str, conns: int, while_held: Callable[[], None]) -> Measurement:
    """Open `conns` keep-alive connections (one request each), call `while_held`, close them."""
    bench = Path(__file__).resolve().parents[1]
    command = _pinned([sys.executable, "-m", "kilnbench.idle", "--port", str(port), "--conns", str(conns), "--path", path])
    client = subprocess.Popen(command, cwd=bench, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(client.stdout, selectors.EVENT_READ)
            ready = sel.select(timeout=90)
        line = client.stdout.readline() if ready else ""
        if not line:
            raise LoadError("idle client opened no connections within 90 s", command)
        report = json.loads(line)
        time.sleep(1.0)  # let the server settle its buffers before measuring
        while_held()
        client.stdin.write("\n")
        client.stdin.flush()
        client.wait(timeout=GRACE_S)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    result = LoadResult(requests=report["answered"], socket_errors=conns - report["answered"])
    return Measurement(result, command, line)


WSLOAD_SOURCE = Path(__file__).resolve().parents[1] / "wsload" / "wsload.c"
WSLOAD_BINARY = Path(__file__).resolve().parents[1] / ".build" / "wsload" / "wsload"


def wsload_binary() -> Path:
    """bench/wsload built (cc and zlib), again whenever its source is newer."""
    if not WSLOAD_BINARY.exists() or WSLOAD_BINARY.stat().st_mtime < WSLOAD_SOURCE.stat().st_mtime:
        WSLOAD_BINARY.parent.mkdir(parents=True, exist_ok=True)
        argv = ["cc", "-O2", "-o", str(WSLOAD_BINARY), str(WSLOAD_SOURCE), "-lz"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise LoadError("wsload did not build", argv, done.stdout + done.stderr)
    return WSLOAD_BINARY


def wsload(port: int, path: str, conns: int, size: int, duration_s: int, deflate: bool = False,
           messages: int | None = None) -> Measurement:
    """WebSocket echo: `conns` connections, one `size`-byte message in flight on each, for
    `duration_s` (or until `messages` have come back)."""
    argv = [str(wsload_binary())]
    if messages is not None:
        argv += ["-m", str(messages)]
    if deflate:
        argv.append("-z")
    argv += ["127.0.0.1", str(port), path, str(conns), str(size), str(duration_s)]
    return _run(argv, duration_s + 60 + GRACE_S, parse_wsload)


def ws_idle(port: int, path: str, conns: int, while_held: Callable[[], None], hold_s: int = 60) -> Measurement:
    """Open and upgrade `conns` WebSockets, call `while_held` while they idle, then close them."""
    command = _pinned([str(wsload_binary()), "-i", "127.0.0.1", str(port), path, str(conns), "0", str(hold_s)])
    client = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(client.stdout, selectors.EVENT_READ)
            ready = sel.select(timeout=90)
        line = client.stdout.readline() if ready else ""
        upgraded = re.search(r"upgraded=(\d+)", line)
        if not upgraded:
            raise LoadError(f"wsload -i: {line.strip() or 'nothing within 90 s'}", command, line)
        time.sleep(1.0)  # let the server settle its buffers before measuring
        while_held()
    finally:
        client.kill()
        client.wait()
    opened = int(upgraded.group(1))
    return Measurement(LoadResult(requests=opened, socket_errors=conns - opened), command, line)
