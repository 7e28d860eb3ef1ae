"""Hold many idle keep-alive connections open against one server.

Opens N connections to 127.0.0.1:PORT (a bounded number connecting at once),
sends one keep-alive request on each and reads its answer, prints one JSON line
`{"opened": .., "answered": .., "failed": ..}`, then holds every connection idle
until a line arrives on stdin or `--hold` seconds pass, closes them all and exits.
Every phase has a deadline, so it always stops by itself.

Usage: python3 -m kilnbench.idle --port 8080 --conns 10000 --path /pong
"""

from __future__ import annotations

import argparse
import json
import resource
import selectors
import socket
import sys
import time

CONNECTING_AT_ONCE = 256
"""How many connects may be in flight at once, to stay under the listen backlog."""


def _raise_fd_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))


def open_idle(port: int, conns: int, path: str, deadline_s: float) -> tuple[list[socket.socket], int, int]:
    """Open `conns` connections, one answered request each; return (sockets, answered, failed)."""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    sel = selectors.DefaultSelector()
    kept: list[socket.socket] = []
    answered = failed = started = pending = 0
    deadline = time.monotonic() + deadline_s
    while (started < conns or pending) and time.monotonic() < deadline:
        while started < conns and pending < CONNECTING_AT_ONCE:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            sel.register(s, selectors.EVENT_WRITE)
            started += 1
            pending += 1
        for key, _ in sel.select(timeout=0.5):
            s = key.fileobj
            if key.events == selectors.EVENT_WRITE:
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                    try:
                        s.send(request)
                        sel.modify(s, selectors.EVENT_READ)
                        continue
                    except OSError:
                        pass
            else:
                try:
                    if s.recv(65536).startswith(b"HTTP/1.1 2"):
                        sel.unregister(s)
                        kept.append(s)
                        answered += 1
                        pending -= 1
                        continue
                except OSError:
                    pass
            sel.unregister(s)
            s.close()
            failed += 1
            pending -= 1
    for key in list(sel.get_map().values()):
        key.fileobj.close()
        failed += 1
    sel.close()
    return kept, answered, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--conns", type=int, default=10_000)
    parser.add_argument("--path", default="/pong")
    parser.add_argument("--connect-deadline", type=float, default=60.0)
    parser.add_argument("--hold", type=float, default=30.0)
    args = parser.parse_args()
    _raise_fd_limit(args.conns + 64)
    kept, answered, failed = open_idle(args.port, args.conns, args.path, args.connect_deadline)
    print(json.dumps({"opened": len(kept), "answered": answered, "failed": failed}), flush=True)
    selectors_in = selectors.DefaultSelector()
    selectors_in.register(sys.stdin, selectors.EVENT_READ)
    selectors_in.select(timeout=args.hold)
    for s in kept:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
