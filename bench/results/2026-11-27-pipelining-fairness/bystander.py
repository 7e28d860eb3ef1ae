#!/usr/bin/env python3
"""A bystander's wait behind pipeliners (issue 33, item 12): 200 clients each pipeline 200
`/bigtable` requests and read nothing; then a bystander asks `/pong` five times, 0.2 s
apart, and each wait is printed. One worker, 127.0.0.1, every socket with a timeout.

    python3 bystander.py BINARY
"""

import socket
import subprocess
import sys
import tempfile
import time

PIPELINERS = 200
DEPTH = 200
PROBES = 5


def main(binary: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        argv = [binary, "--workers", "1", "--listen", f"127.0.0.1:{port}", "--access-log", "off",
                "--database", f"sqlite://{tmp}/db.sqlite"]  # fmt: skip
        server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(300):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.2)
            time.sleep(1)
            pipelined = b"GET /bigtable HTTP/1.1\r\nHost: a\r\n\r\n" * DEPTH
            pipeliners = []
            for _ in range(PIPELINERS):
                s = socket.create_connection(("127.0.0.1", port), timeout=30)
                s.sendall(pipelined)
                pipeliners.append(s)
            waits = []
            for _ in range(PROBES):
                start = time.monotonic()
                with socket.create_connection(("127.0.0.1", port), timeout=30) as bystander:
                    bystander.sendall(b"GET /pong HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
                    bystander.recv(100)
                waits.append(time.monotonic() - start)
                time.sleep(0.2)
            print(binary, "bystander /pong waits (s):", " ".join(f"{w:.3f}" for w in waits))
            for s in pipeliners:
                s.close()
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main(sys.argv[1])
