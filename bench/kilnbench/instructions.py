"""Instructions per request of two kiln-demo binaries, counted by valgrind's callgrind: the
A/B that a busy machine cannot blur. CPU time per request moves by several percent from one
run to the next when other work shares the cores; the instructions a request executes do not
(two runs of one binary agree within 0.5 %). They are not time (cache misses and system calls
are not in them), so a change that the count calls neutral still wants the timed A/B on a
quiet machine (`bench/run --servers kiln,kiln-base --baseline ...`); but a change that adds
3 % of instructions to a page shows here, in the change that adds them.

    python3 -m kilnbench.instructions OLD_BINARY NEW_BINARY [--path /pages/tour] [--requests 300]
    python3 -m kilnbench.instructions OLD NEW --header 'Accept-Encoding: gzip'   # a compressed page
    python3 -m kilnbench.instructions BINARY --pair /bench/first/html /bench/first/live --threshold 0.05

`--pair FIRST SECOND` compares two paths of one binary instead (the second ÷ the first):
a live view's first page beside the same page by `html!`, each path in a server of its own.

Each binary runs with one worker on a fresh SQLite file, pinned to CPU 0; after a warm-up,
callgrind counts from the first of `--requests` requests, sent `--conns` at a time on
keep-alive connections (no cookies: the page makes a new CSRF token every time, as under
wrk), to the last. Every thread counts: the SQLite threads are part of a page's cost.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

THRESHOLD = 0.03
START_TIMEOUT_S = 120


def callgrind_total(text: str) -> int:
    """The instructions a callgrind dump counted: its `summary:` (or `totals:`) line."""
    for line in text.splitlines():
        for key in ("summary:", "totals:"):
            if line.startswith(key):
                return int(line.split()[1])
    raise ValueError("no summary or totals line in the callgrind output")


def response_length(buf: bytes) -> int | None:
    """How many bytes of `buf` the first whole response takes (head and a Content-Length or
    chunked body), or None if it is not all there yet."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    length, chunked = 0, False
    for line in buf[:end].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding":
            chunked = value.strip().lower() == b"chunked"
    if chunked:
        return chunked_end(buf, end + 4)
    total = end + 4 + length
    return total if len(buf) >= total else None


def chunked_end(buf: bytes, at: int) -> int | None:
    """Where the chunked body that starts at `at` ends (its last chunk and empty trailer), or
    None if it is not all there yet."""
    while True:
        line_end = buf.find(b"\r\n", at)
        if line_end < 0:
            return None
        size = int(buf[at:line_end].split(b";")[0], 16)
        at = line_end + 2
        if size == 0:
            return at + 2 if len(buf) >= at + 2 else None
        at += size + 2
        if len(buf) < at:
            return None


def drive(port: int, path: str, requests: int, conns: int, headers: tuple[str, ...] = ()) -> int:
    """Sends `requests` GETs with `headers` (`Name: value` lines), `conns` at a time; returns
    how many were not 200."""
    extra = "".join(f"{h}\r\n" for h in headers)
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}\r\n".encode()
    socks = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(conns)]
    bufs = [b""] * conns
    bad = sent = 0
    try:
        while sent < requests:
            batch = min(conns, requests - sent)
            for s in socks[:batch]:
                s.sendall(request)
            for i in range(batch):
                while (n := response_length(bufs[i])) is None:
                    chunk = socks[i].recv(65536)
                    if not chunk:
                        raise ConnectionError("the server closed the connection")
                    bufs[i] += chunk
                bad += bufs[i][9:12] != b"200"
                bufs[i] = bufs[i][n:]
            sent += batch
    finally:
        for s in socks:
            s.close()
    return bad


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def count(binary: Path, path: str, requests: int, conns: int, warmup: int, env: dict[str, str] | None = None,
          headers: tuple[str, ...] = ()) -> float:
    """Instructions per request of `binary` serving `path` to requests carrying `headers`, with
    `env` added to its environment."""
    with tempfile.TemporaryDirectory(prefix="kiln-instructions-") as tmp:
        port, out = free_port(), Path(tmp) / "callgrind.out"
        argv = [
            "taskset", "-c", "0", "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
            str(binary), "--workers", "1", "--listen", f"127.0.0.1:{port}", "--access-log", "off",
            "--database", f"sqlite://{tmp}/db.sqlite",
        ]  # fmt: skip
        return measure(argv, str(binary), port, Path(tmp), path, requests, conns, warmup, headers, env)


def measure(argv: list[str], name: str, port: int, dumps_in: Path, path: str, requests: int, conns: int,
            warmup: int, headers: tuple[str, ...], env: dict[str, str] | None = None) -> float:
    """Starts `argv` (a server under callgrind with `--instr-atstart=no`, dumping into
    `dumps_in`), waits for it on `port`, warms it up, counts `requests` to `path` and
    stops it: instructions per request. Shared by kiln's count and the peers'."""
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                drive(port, path, 1, 1, headers)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError(f"{name} did not answer on port {port}") from None
                time.sleep(0.5)
        drive(port, path, warmup, conns, headers)
        subprocess.run(["callgrind_control", "--instr=on", str(server.pid)], check=True, capture_output=True)
        bad = drive(port, path, requests, conns, headers)
        subprocess.run(["callgrind_control", "--dump", str(server.pid)], check=True, capture_output=True)
        if bad:
            raise RuntimeError(f"{name}: {bad} of {requests} answers to {path} were not 200")
        dumps = sorted(dumps_in.glob("callgrind.out*"), key=lambda p: p.stat().st_mtime)
        return callgrind_total(dumps[-1].read_text(errors="replace")) / requests
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a binary serving a path, with variables added to its
    environment."""

    binary: Path
    path: str
    env: tuple[tuple[str, str], ...] = ()


def verdict(old: float, new: float, threshold: float = THRESHOLD, names: tuple[str, str] = ("new", "old")) -> str:
    ratio = new / old
    word = f"REGRESSION (> {1 + threshold:.2f})" if ratio > 1 + threshold else "ok"
    return f"{names[0]} ÷ {names[1]} {ratio:.3f}: {word}"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m kilnbench.instructions", description=__doc__.split("\n\n")[0])
    p.add_argument("binaries", type=Path, nargs="+", metavar="OLD NEW | BINARY",
                   help="two binaries compared on the same paths, or one with --pair")  # fmt: skip
    p.add_argument("--path", action="append", help="request target, repeatable [/pages/tour]")
    p.add_argument("--pair", nargs=2, metavar=("FIRST", "SECOND"),
                   help="two paths of one binary: SECOND ÷ FIRST (e.g. /bench/first/html /bench/first/live)")  # fmt: skip
    p.add_argument("--threshold", type=float, default=THRESHOLD, help=f"a ratio above 1 + this is a regression [{THRESHOLD}]")
    p.add_argument("--requests", type=int, default=300)
    p.add_argument("--conns", type=int, default=10)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument(
        "--new-env", action="append", default=[], metavar="KEY=VALUE",
        help="set for the new binary only, repeatable: the same binary with a feature on, e.g. KILN_METRICS=1",
    )  # fmt: skip
    p.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                   help="sent with every request to both binaries, repeatable: e.g. 'Accept-Encoding: br'")  # fmt: skip
    return p


def comparisons(args: argparse.Namespace) -> list[tuple[Side, Side]]:
    """What to count, as (old, new) sides: each path on both binaries, or the pair's two
    paths on one. Raises ValueError for a combination that names neither."""
    new_env = tuple(tuple(kv.split("=", 1)) for kv in args.new_env)
    if any(len(kv) != 2 for kv in new_env):
        raise ValueError("--new-env takes KEY=VALUE")
    if args.pair:
        if len(args.binaries) != 1 or args.path:
            raise ValueError("--pair compares two paths of one binary: give one binary and no --path")
        (binary,), (first, second) = args.binaries, args.pair
        return [(Side(binary, first), Side(binary, second, new_env))]
    if len(args.binaries) != 2:
        raise ValueError("give two binaries (OLD NEW), or one with --pair FIRST SECOND")
    old, new = args.binaries
    return [(Side(old, path), Side(new, path, new_env)) for path in args.path or ["/pages/tour"]]


def main(argv: list[str]) -> int:
    p = parser()
    args = p.parse_args(argv)
    try:
        pairs = comparisons(args)
    except ValueError as e:
        p.error(str(e))
    missing = [t for t in ("valgrind", "callgrind_control", "taskset") if not shutil.which(t)]
    if missing:
        print(f"kilnbench.instructions: missing {', '.join(missing)} (apt-get install valgrind util-linux)", file=sys.stderr)
        return 2
    headers, pair = tuple(args.header), bool(args.pair)
    worse = False
    for old, new in pairs:
        counts = [
            count(side.binary, side.path, args.requests, args.conns, args.warmup, dict(side.env), headers)
            for side in (old, new)
        ]  # fmt: skip
        names = (new.path, old.path) if pair else ("new", "old")
        line = verdict(counts[0], counts[1], args.threshold, names)
        worse |= "REGRESSION" in line
        if pair:
            print(f"{old.path} {counts[0]:,.0f}  {new.path} {counts[1]:,.0f} instructions per request; {line}", flush=True)
        else:
            print(f"{old.path}: old {counts[0]:,.0f}  new {counts[1]:,.0f} instructions per request; {line}", flush=True)
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
