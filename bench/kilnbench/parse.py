"""Parsers for the text that wrk, ab, httperf and h2load print.

Each returns a `LoadResult`; a line the tool did not print leaves its field `None`,
so "not measured" never reads as zero. Output that is not a finished run raises
`ParseError` carrying the tool's own complaint.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


class ParseError(ValueError):
    """The tool's output is not the report of a finished run."""


@dataclass
class LoadResult:
    """What one load-generator run measured, in the units of raw.csv."""

    requests: int | None = None
    duration_s: float | None = None
    rps: float | None = None
    lat_mean_ms: float | None = None
    lat_p50_ms: float | None = None
    lat_p99_ms: float | None = None
    lat_max_ms: float | None = None
    non2xx: int = 0
    socket_errors: int = 0
    timeouts: int = 0
    failed: int | None = None
    """Failures as the tool itself counts them (ab's "Failed requests", httperf's "Errors: total"),
    which is what the reports quoted; None for a tool that has no such count."""
    reply_rate_avg: float | None = None
    """httperf's average reply rate over its 5-second samples (the Snap report's figure); None
    when the run was too short for a sample."""

    @property
    def errors(self) -> int:
        return self.non2xx + self.socket_errors + self.timeouts


def _ms(value: str, unit: str) -> float:
    return float(value) * _UNITS_MS[unit]


def _search(pattern: str, text: str) -> re.Match[str] | None:
    return re.search(pattern, text, re.MULTILINE)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def parse_wrk(text: str) -> LoadResult:
    """Parse `wrk --latency` output (with or without a pipelining script)."""
    total = _search(r"^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h),", text)
    if total is None:
        raise ParseError(f"wrk: {_first_line(text)}")
    result = LoadResult(
        requests=int(total.group(1)),
        duration_s=_ms(total.group(2), total.group(3)) / 1000.0,
    )
    rps = _search(r"^Requests/sec:\s+([\d.]+)", text)
    if rps:
        result.rps = float(rps.group(1))
    latency = _search(r"^\s*Latency\s+([\d.]+)(us|ms|s)\s+\S+\s+([\d.]+)(us|ms|s)", text)
    if latency:
        result.lat_mean_ms = _ms(latency.group(1), latency.group(2))
        result.lat_max_ms = _ms(latency.group(3), latency.group(4))
    percentiles = {
        int(p): _ms(v, u)
        for p, v, u in re.findall(r"^\s+(\d+)%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.MULTILINE)
    }
    result.lat_p50_ms = percentiles.get(50)
    # wrk's histogram loses samples past its range when pipelining and then
    # prints 0 for p99; a p99 below the p90 is that artefact, not a measurement.
    p99 = percentiles.get(99)
    if p99 is not None and p99 >= percentiles.get(90, 0.0) and p99 > 0:
        result.lat_p99_ms = p99
    if result.requests == 0:
        result.lat_mean_ms = result.lat_max_ms = result.lat_p50_ms = None
    non2xx = _search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    if non2xx:
        result.non2xx = int(non2xx.group(1))
    sock = _search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if sock:
        result.socket_errors = int(sock.group(1)) + int(sock.group(2)) + int(sock.group(3))
        result.timeouts = int(sock.group(4))
    return result


def parse_h2load(text: str) -> LoadResult:
    """Parse h2load output (`h2load -c C -m M -D T URL`). h2load reports a mean and a maximum
    time per request, no percentiles; a run that completed no request (refused, no h2)
    is not a measurement."""
    finished = _search(r"^finished in ([\d.]+)(us|ms|s|m|h), ([\d.]+) req/s", text)
    counts = _search(
        r"^requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout",
        text,
    )
    if finished is None or counts is None:
        raise ParseError(f"h2load: {_first_line(text)}")
    done = int(counts.group(2))
    if done == 0:
        protocol = _search(r"^Application protocol: (\S+)", text)
        why = "no request completed" if protocol else "no connection spoke HTTP/2 (refused, or no h2/h2c)"
        raise ParseError(f"h2load: {why}")
    result = LoadResult(
        requests=done,
        duration_s=_ms(finished.group(1), finished.group(2)) / 1000.0,
        rps=float(finished.group(3)),
        socket_errors=int(counts.group(5)),
        timeouts=int(counts.group(6)),
        failed=int(counts.group(4)),
    )
    ok = _search(r"^status codes: (\d+) 2xx", text)
    # At -D's end h2load counts a few streams it cut off among "done" but not under
    # "status codes", or the other way round: never a negative count.
    result.non2xx = max(0, done - int(ok.group(1))) if ok else 0
    latency = _search(r"^time for request:\s+[\d.]+(?:us|ms|s)\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)", text)
    if latency:
        result.lat_max_ms = _ms(latency.group(1), latency.group(2))
        result.lat_mean_ms = _ms(latency.group(3), latency.group(4))
    return result


def parse_ab(text: str) -> LoadResult:
    """Parse ApacheBench output (`ab -r -k ...`)."""
    complete = _search(r"^Complete requests:\s+(\d+)", text)
    if complete is None:
        raise ParseError(f"ab: {_first_line(text)}")
    result = LoadResult(requests=int(complete.group(1)))
    taken = _search(r"^Time taken for tests:\s+([\d.]+) seconds", text)
    if taken:
        result.duration_s = float(taken.group(1))
    rps = _search(r"^Requests per second:\s+([\d.]+)", text)
    if rps:
        result.rps = float(rps.group(1))
    mean = _search(r"^Time per request:\s+([\d.]+) \[ms\] \(mean\)$", text)
    if mean:
        result.lat_mean_ms = float(mean.group(1))
    percentiles = {int(p): float(v) for p, v in re.findall(r"^\s+(\d+)%\s+(\d+)", text, re.MULTILINE)}
    result.lat_p50_ms = percentiles.get(50)
    result.lat_p99_ms = percentiles.get(99)
    result.lat_max_ms = percentiles.get(100)
    non2xx = _search(r"^Non-2xx responses:\s+(\d+)", text)
    if non2xx:
        result.non2xx = int(non2xx.group(1))
    total_failed = _search(r"^Failed requests:\s+(\d+)", text)
    if total_failed:
        result.failed = int(total_failed.group(1))
    failed = _search(r"^\s+\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", text)
    if failed:
        # "Length" failures are bodies whose size differs from the first one:
        # a dynamic page legitimately varies, so they are not counted as errors.
        connect, receive, _length, exceptions = (int(g) for g in failed.groups())
        result.socket_errors = connect + receive + exceptions
    return result


def parse_httperf(text: str) -> LoadResult:
    """Parse httperf output (a fixed `--rate` run)."""
    total = _search(r"^Total: connections (\d+) requests (\d+) replies (\d+) test-duration ([\d.]+) s", text)
    if total is None:
        raise ParseError(f"httperf: {_first_line(text)}")
    replies = int(total.group(3))
    duration = float(total.group(4))
    result = LoadResult(requests=replies, duration_s=duration, rps=replies / duration if duration else None)
    reply_time = _search(r"^Reply time \[ms\]: response ([\d.]+) transfer ([\d.]+)", text)
    if reply_time and replies:
        result.lat_mean_ms = float(reply_time.group(1)) + float(reply_time.group(2))
    conn_time = _search(r"^Connection time \[ms\]: min [\d.]+ avg [\d.]+ max ([\d.]+) median", text)
    if conn_time and replies:
        # httperf reports no per-request percentiles; the longest connection
        # bounds the slowest reply.
        result.lat_max_ms = float(conn_time.group(1))
    status = _search(r"^Reply status: 1xx=(\d+) 2xx=(\d+) 3xx=(\d+) 4xx=(\d+) 5xx=(\d+)", text)
    if status:
        counts = [int(g) for g in status.groups()]
        result.non2xx = sum(counts) - counts[1]
    samples = _search(r"^Reply rate \[replies/s\]: min [\d.]+ avg ([\d.]+) max [\d.]+ stddev [\d.]+ \((\d+) samples\)", text)
    if samples and int(samples.group(2)) > 0:
        result.reply_rate_avg = float(samples.group(1))
    errors = _search(r"^Errors: total (\d+) client-timo (\d+) socket-timo (\d+)", text)
    if errors:
        total_errors, client_timo, socket_timo = (int(g) for g in errors.groups())
        result.failed = total_errors
        result.timeouts = client_timo + socket_timo
        result.socket_errors = total_errors - result.timeouts
    return result


def parse_wsload(text: str) -> LoadResult:
    """Parse wsload's line: `connections=C size=S seconds=D messages=N rate=R errors=E`."""
    line = _search(r"messages=(\d+) rate=([\d.]+) errors=(\d+)", text)
    took = _search(r"seconds=([\d.]+)", text)
    if line is None or took is None:
        raise ParseError(f"wsload: {_first_line(text)}")
    return LoadResult(
        requests=int(line.group(1)), duration_s=float(took.group(1)), rps=float(line.group(2)),
        socket_errors=int(line.group(3)),
    )  # fmt: skip


def json_report(text: str, tool: str, keys: set[str]) -> dict:
    """The last line of `text` that is a JSON object with every one of `keys`: the one-line
    report our own load tools (tls-handshakes, sseload) print at the end."""
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                break
            if isinstance(value, dict) and keys <= value.keys():
                return value
    raise ParseError(f"no {tool} report in: {text.strip()[-200:]!r}")
