"""The resident set of a kiln-demo binary before, during and after a burst of connections
that hold memory and then close: what a burst leaves behind, and whether the server gives
it back (issue 33, item 11).

    python3 -m kilnbench.memburst BINARY [BINARY ...] [--burst uploads|heads] [--conns N]

Each binary runs on a fresh SQLite file on 127.0.0.1 (`--workers`, default 2). After
`/pong` answers, the burst opens `--conns` connections that each hold memory and stop:
`uploads` send a `POST /pong` head announcing a body of `--upload-bytes` and only part
of it (the engine reads a buffered body whole, so each holds its read buffer); `heads`
send half a request head; `subscribers` subscribe to the tour page's live comments
(`/pages/tour/live`, an event stream) and read nothing. The connections stay open `--hold` seconds, then all close.
VmRSS is read from /proc before the burst, while it is held, and at 1, 3, 5 and 10 s
after the close; the server's log lines that say a burst's memory went back (and what
the trim took) are printed. Bounded: at most 5,000 connections, loopback only, every wait timed.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MAX_CONNS = 5_000
START_TIMEOUT_S = 60
AFTER_CLOSE_S = (1, 3, 5, 10)


def vm_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /pong HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            return s.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def open_burst(port: int, kind: str, conns: int, upload_bytes: int) -> list[socket.socket]:
    """Opens `conns` connections that each hold memory in the server and stop sending."""
    socks = []
    for _ in range(conns):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        if kind == "uploads":
            s.sendall(f"POST /pong HTTP/1.1\r\nHost: a\r\nContent-Length: {upload_bytes}\r\n\r\n".encode())
            s.setblocking(False)
            # As much of the body as the socket takes at once, never all of it.
            part = b"x" * (upload_bytes * 9 // 10)
            try:
                s.send(part)
            except BlockingIOError:
                pass
        elif kind == "subscribers":
            s.sendall(b"GET /pages/tour/live HTTP/1.1\r\nHost: a\r\nAccept: text/event-stream\r\n\r\n")
        else:
            s.sendall(b"GET /pages/tour HTTP/1.1\r\nHost: a\r\nUser-Agent: half a head\r\nAccept: text/")
        socks.append(s)
    return socks


def run(binary: Path, kind: str, conns: int, upload_bytes: int, hold: float, workers: int) -> dict[str, int | str]:
    with tempfile.TemporaryDirectory(prefix="kiln-memburst-") as tmp:
        port, log = free_port(), Path(tmp) / "server.log"
        argv = [str(binary), "--workers", str(workers), "--listen", f"127.0.0.1:{port}", "--access-log", "off",
                "--database", f"sqlite://{tmp}/db.sqlite"]  # fmt: skip
        with log.open("wb") as err:
            server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not pong(port):
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError(f"{binary} did not answer on port {port}")
                time.sleep(0.2)
            time.sleep(2)
            row: dict[str, int | str] = {"binary": str(binary), "burst": f"{conns} {kind}"}
            row["idle_kb"] = vm_rss_kb(server.pid)
            socks = open_burst(port, kind, conns, upload_bytes)
            time.sleep(hold)
            row["held_kb"] = vm_rss_kb(server.pid)
            for s in socks:
                s.close()
            closed = time.monotonic()
            for after in AFTER_CLOSE_S:
                time.sleep(max(0.0, closed + after - time.monotonic()))
                row[f"after_{after}s_kb"] = vm_rss_kb(server.pid)
            row["pong_after"] = "ok" if pong(port) else "FAILED"
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        row["trims"] = " | ".join(
            line.strip() for line in log.read_text(errors="replace").splitlines() if "given back to the system" in line
        ) or "none"
        return row


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python3 -m kilnbench.memburst", description=__doc__.split("\n\n")[0])
    p.add_argument("binaries", type=Path, nargs="+")
    p.add_argument("--burst", choices=("uploads", "heads", "subscribers"), default="uploads")
    p.add_argument("--conns", type=int, default=200)
    p.add_argument("--upload-bytes", type=int, default=1_000_000, help="the body each upload announces")
    p.add_argument("--hold", type=float, default=3.0, help="seconds the burst is held open")
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    if not 0 < args.conns <= MAX_CONNS:
        p.error(f"--conns must be between 1 and {MAX_CONNS}")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.conns + 100)), hard))
    keys = ["idle_kb", "held_kb", *(f"after_{a}s_kb" for a in AFTER_CLOSE_S)]
    print("binary,burst," + ",".join(keys) + ",pong_after,trims")
    for binary in args.binaries:
        row = run(binary, args.burst, args.conns, args.upload_bytes, args.hold, args.workers)
        print(",".join(str(row[k]) for k in ["binary", "burst", *keys, "pong_after"]) + f',"{row["trims"]}"', flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main(sys.argv[1:]))
