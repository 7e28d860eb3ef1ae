"""Instructions per request of two kiln-demo binaries, counted by valgrind's callgrind: the
A/B that a busy machine cannot blur. CPU time per request moves by several percent from one
run to the next when other work shares the cores; the instructions a request executes do not
(two runs of one binary agree within 0.5 %). They are not time (cache misses and system calls
are not in them), so a change that the count calls neutral still wants the timed A/B on a
quiet machine (`bench/run --servers kiln,kiln-base --baseline ...`); but a change that adds
3 % of instructions to a page shows here, in the change that adds them.

    python3 -m kilnbench.instructions OLD_BINARY NEW_BINARY [--path /pages/tour] [--requests 300]
    python3 -m kilnbench.instructions OLD NEW --header 'Accept-Encoding: gzip'   # a compressed page

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


def verdict(old: float, new: float, threshold: float = THRESHOLD) -> str:
    ratio = new / old
    word = f"REGRESSION (> {1 + threshold:.2f})" if ratio > 1 + threshold else "ok"
    return f"new ÷ old {ratio:.3f}: {word}"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python3 -m kilnbench.instructions", description=__doc__.split("\n\n")[0])
    p.add_argument("old", type=Path)
    p.add_argument("new", type=Path)
    p.add_argument("--path", action="append", help="request target, repeatable [/pages/tour]")
    p.add_argument("--requests", type=int, default=300)
    p.add_argument("--conns", type=int, default=10)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument(
        "--new-env", action="append", default=[], metavar="KEY=VALUE",
        help="set for the new binary only, repeatable: the same binary with a feature on, e.g. KILN_METRICS=1",
    )  # fmt: skip
    p.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                   help="sent with every request to both binaries, repeatable: e.g. 'Accept-Encoding: br'")  # fmt: skip
    args = p.parse_args(argv)
    missing = [t for t in ("valgrind", "callgrind_control", "taskset") if not shutil.which(t)]
    if missing:
        print(f"kilnbench.instructions: missing {', '.join(missing)} (apt-get install valgrind util-linux)", file=sys.stderr)
        return 2
    new_env = dict(kv.split("=", 1) for kv in args.new_env)
    worse = False
    for path in args.path or ["/pages/tour"]:
        headers = tuple(args.header)
        old = count(args.old, path, args.requests, args.conns, args.warmup, headers=headers)
        new = count(args.new, path, args.requests, args.conns, args.warmup, new_env, headers)
        line = verdict(old, new)
        worse |= "REGRESSION" in line
        print(f"{path}: old {old:,.0f}  new {new:,.0f} instructions per request; {line}", flush=True)
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
