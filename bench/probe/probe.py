#!/usr/bin/env python3
"""An outside probe of kiln-demo, as an attacker and an unlucky user would see it
(issue 13). Loopback only; every loop is bounded in count and time.

    bench/probe/probe.py all --server target/release/kiln-demo
    bench/probe/probe.py shutdown|slowread|memory|flood|h1spec [options]

Each command starts its own kiln-demo (one worker, a throwaway working folder and
public folder) and prints one line of figures per measurement.
"""

import argparse
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HOST = "127.0.0.1"


class Demo:
    """A kiln-demo process on a free loopback port, with a public folder holding
    `big.bin` (20 MiB) for the slow-read measurements."""

    def __init__(self, binary, workers=1, extra=()):
        self.dir = tempfile.TemporaryDirectory(prefix="kiln-probe-")
        public = os.path.join(self.dir.name, "public")
        os.mkdir(public)
        with open(os.path.join(public, "big.bin"), "wb") as f:
            f.write(os.urandom(1 << 20) * 20)
        with open(os.path.join(public, "1m.bin"), "wb") as f:
            f.write(os.urandom(1 << 20))
        s = socket.socket()
        s.bind((HOST, 0))
        self.port = s.getsockname()[1]
        s.close()
        if "echo" in os.path.basename(binary):
            # crates/kiln-http/examples/echo.rs: 200 and the body, for any request.
            args = [binary, f"{HOST}:{self.port}"]
        else:
            args = [binary, "--listen", f"{HOST}:{self.port}", "--workers", str(workers), "--public", public, *extra]
        self.log = open(os.path.join(self.dir.name, "server.log"), "wb")
        self.proc = subprocess.Popen(args, cwd=self.dir.name, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 15
        while time.time() < deadline:
            try:
                socket.create_connection((HOST, self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("kiln-demo did not start")

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        self.dir.cleanup()


def read_response(sock, buf=b""):
    """Reads one response (Content-Length or no body); returns (head, rest) or None at EOF."""
    while b"\r\n\r\n" not in buf:
        data = sock.recv(65536)
        if not data:
            return None
        buf += data
    head, _, rest = buf.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        data = sock.recv(65536)
        if not data:
            return None
        rest += data
    return head, rest[length:]


def small_window(rcvbuf):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    return s


# --- requests lost at SIGTERM under load -------------------------------------------------


def shutdown(args):
    """Keep-alive connections loop on a path; SIGTERM after a while. A request is lost
    when it was written and the connection ended without its answer."""
    totals = []
    for run in range(args.runs):
        demo = Demo(args.server)
        outcome = {"lost": 0, "told_close": 0, "answered": 0, "refused_write": 0, "other": 0}
        lock = threading.Lock()
        stop_at = time.time() + args.seconds + 20

        def client():
            try:
                s = socket.create_connection((HOST, demo.port), timeout=10)
            except OSError:
                with lock:
                    outcome["other"] += 1
                return
            buf = b""
            result = "other"
            for _ in range(1_000_000):
                if time.time() > stop_at:
                    break
                try:
                    s.sendall(f"GET {args.path} HTTP/1.1\r\nHost: probe\r\n\r\n".encode())
                except OSError:
                    result = "refused_write"
                    break
                try:
                    got = read_response(s, buf)
                except OSError:
                    got = None
                if got is None:
                    result = "lost"
                    break
                head, buf = got
                with lock:
                    outcome["answered"] += 1
                if b"\r\nconnection: close" in head.lower():
                    result = "told_close"
                    break
            s.close()
            with lock:
                outcome[result] += 1

        threads = [threading.Thread(target=client) for _ in range(args.conns)]
        for t in threads:
            t.start()
        time.sleep(args.seconds)
        demo.proc.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(timeout=30)
        demo.stop()
        totals.append(outcome["lost"])
        print(f"shutdown run {run + 1}: {args.conns} connections on {args.path}, SIGTERM after {args.seconds} s: "
              f"lost {outcome['lost']}, told Connection: close {outcome['told_close']}, "
              f"write refused {outcome['refused_write']}, other {outcome['other']}, answered {outcome['answered']}",
              flush=True)
    print(f"shutdown: requests lost per run {totals}")


# --- a 20 MiB file to a 60 KB/s reader ---------------------------------------------------


def slowread(args):
    demo = Demo(args.server)
    try:
        s = small_window(8192)
        s.connect((HOST, demo.port))
        s.sendall(b"GET /static/big.bin HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
        s.settimeout(60)
        started = time.time()
        got = 0
        per_tick = args.rate // 10
        deadline = started + (20 << 20) / args.rate * 1.5 + 60
        while time.time() < deadline:
            tick = time.time()
            want = per_tick
            closed = False
            while want > 0:
                data = s.recv(min(want, 65536))
                if not data:
                    closed = True
                    break
                got += len(data)
                want -= len(data)
            if closed:
                break
            time.sleep(max(0.0, 0.1 - (time.time() - tick)))
        took = time.time() - started
        body = got - 200  # the head is about 200 bytes; the exact figure follows
        print(f"slowread: {got} bytes (head and body) of a {20 << 20}-byte file at {args.rate} B/s "
              f"in {took:.0f} s; body complete: {body >= (20 << 20) - 200}")
    finally:
        demo.stop()


# --- memory: never-used connections, stalled giant responses, stalled uploads ---------------


def memory(args):
    demo = Demo(args.server)
    try:
        warm = socket.create_connection((HOST, demo.port))
        warm.sendall(b"GET /pong HTTP/1.1\r\nHost: probe\r\n\r\n")
        read_response(warm)
        time.sleep(0.5)

        base = demo.rss_kib()
        idle = [socket.create_connection((HOST, demo.port)) for _ in range(args.idle)]
        time.sleep(1.5)
        grown = demo.rss_kib() - base
        print(f"memory: {args.idle} never-used connections: +{grown} KiB RSS, "
              f"{grown / args.idle:.2f} KiB per connection")
        for s in idle:
            s.close()
        time.sleep(1)

        base = demo.rss_kib()
        giants = []
        for _ in range(8):
            s = small_window(4096)
            s.connect((HOST, demo.port))
            s.sendall(b"GET /bigtable?rows=10000&cols=1000 HTTP/1.1\r\nHost: probe\r\n\r\n")
            giants.append(s)
        time.sleep(3)
        peak = demo.rss_kib()
        pong = socket.create_connection((HOST, demo.port), timeout=10)
        t = time.time()
        pong.sendall(b"GET /pong HTTP/1.1\r\nHost: probe\r\n\r\n")
        read_response(pong)
        print(f"memory: 8 unread /bigtable?rows=10000&cols=1000: RSS {peak} KiB (+{peak - base} KiB); "
              f"a /pong meanwhile took {(time.time() - t) * 1000:.1f} ms")
        for s in giants:
            s.close()
        time.sleep(1)

        base = demo.rss_kib()
        body_len = 1_048_000
        uploads, refused = [], 0
        chunk = b"u" * 65536
        for _ in range(args.uploads):
            s = socket.create_connection((HOST, demo.port))
            s.setblocking(False)
            pending = f"POST /pong HTTP/1.1\r\nHost: probe\r\nContent-Length: {body_len}\r\n\r\n".encode()
            sent, limit = 0, body_len - 8000
            give_up = time.time() + 2
            while sent < limit and time.time() < give_up:
                try:
                    n = s.send(pending or chunk[: min(len(chunk), limit - sent)])
                except BlockingIOError:
                    time.sleep(0.001)
                    continue
                except OSError:
                    break
                if pending:
                    pending = pending[n:]
                else:
                    sent += n
            uploads.append(s)
        time.sleep(3)
        stalled = demo.rss_kib()
        for s in uploads:
            try:
                if s.recv(64).startswith(b"HTTP/1.1 503"):
                    refused += 1
            except OSError:
                pass
            s.close()
        time.sleep(3)
        after = demo.rss_kib()
        print(f"memory: {args.uploads} stalled uploads of {body_len - 8000} of {body_len} bytes: RSS {stalled} KiB "
              f"(+{stalled - base} KiB), {refused} answered 503; after they closed: {after} KiB (+{after - base} KiB)")
    finally:
        demo.stop()


# --- a request's wait during a slow-read flood ---------------------------------------------


def flood(args):
    demo = Demo(args.server)
    try:
        waits = []
        done = threading.Event()

        def prober():
            s = socket.create_connection((HOST, demo.port), timeout=30)
            buf = b""
            for _ in range(100_000):
                if done.is_set():
                    break
                t = time.time()
                s.sendall(b"GET /pong HTTP/1.1\r\nHost: probe\r\n\r\n")
                got = read_response(s, buf)
                if got is None:
                    break
                buf = got[1]
                waits.append(time.time() - t)
                time.sleep(0.01)
            s.close()

        probe = threading.Thread(target=prober)
        probe.start()
        sel = selectors.DefaultSelector()
        socks = []
        ramp_until = time.time() + args.ramp
        end = ramp_until + args.hold
        request = f"GET {args.path} HTTP/1.1\r\nHost: probe\r\n\r\n".encode() * 3
        last_read = time.time()
        while time.time() < end:
            now = time.time()
            due = min(args.conns, int(args.conns * (1 - (ramp_until - now) / args.ramp)) if now < ramp_until else args.conns)
            while len(socks) < due:
                s = small_window(2048)
                s.setblocking(False)
                try:
                    s.connect((HOST, demo.port))
                except BlockingIOError:
                    pass
                sel.register(s, selectors.EVENT_WRITE)
                socks.append(s)
            for key, _ in sel.select(timeout=0.01):
                sel.unregister(key.fileobj)
                try:
                    key.fileobj.send(request)
                except OSError:
                    pass
            if now - last_read > 1:
                # Slow read: a few bytes from each connection once a second.
                last_read = now
                for s in socks:
                    try:
                        s.recv(32)
                    except OSError:
                        pass
        done.set()
        probe.join(timeout=30)
        for s in socks:
            s.close()
        waits.sort()
        worst = waits[-1] * 1000 if waits else float("nan")
        p99 = waits[int(len(waits) * 0.99) - 1] * 1000 if waits else float("nan")
        print(f"flood: {args.conns} slow-read connections ({args.path} x3 pipelined, 2 KiB window) ramped over "
              f"{args.ramp} s, held {args.hold} s: {len(waits)} /pong on an open connection, "
              f"worst wait {worst:.1f} ms, p99 {p99:.1f} ms")
    finally:
        demo.stop()


# --- h1spec's 33 cases ---------------------------------------------------------------------

# h1spec's cases, re-created: (request, what it checks, accepted status ranges, the body
# a 200 must echo). None: the request is incomplete, and the server must answer
# nothing within the read timeout. h1spec expects a subject that answers any method on
# any path with 200 and the request body: crates/kiln-http/examples/echo.rs.
H1SPEC = [
    ("G", "fragmented method", None, None),
    ("GET ", "fragmented target 1", None, None),
    ("GET /hello", "fragmented target 2", None, None),
    ("GET /hello ", "fragmented target 3", None, None),
    ("GET /hello HTTP", "fragmented version", None, None),
    ("GET /hello HTTP/1.1", "fragmented request line", None, None),
    ("GET /hello HTTP/1.1\r", "fragmented request line CR", None, None),
    ("GET /hello HTTP/1.1\r\n", "fragmented request line CRLF", None, None),
    ("GET /hello HTTP/1.1\r\nHos", "fragmented field name", None, None),
    ("GET /hello HTTP/1.1\r\nHost:", "fragmented field value 1", None, None),
    ("GET /hello HTTP/1.1\r\nHost: ", "fragmented field value 2", None, None),
    ("GET /hello HTTP/1.1\r\nHost: localhost", "fragmented field value 3", None, None),
    ("GET /hello HTTP/1.1\r\nHost: localhost\r", "fragmented field value 4", None, None),
    ("GET /hello HTTP/1.1\r\nHost: localhost\r\n", "fragmented head", None, None),
    ("GET /hello HTTP/1.1\r\nHost: localhost\r\n\r", "fragmented head end", None, None),
    ("GET {p} \r\n\r\n", "no version", [(400, 599)], None),
    ("GET {p} HTTP/1.1\r\nHost: example.com\r\nExpect: 100-continue\r\n\r\n", "Expect", [(100, 100), (200, 299)], None),
    ("GET {p} HTTP/1.1\r\nHost: example.com\r\n\r\n", "valid GET", [(200, 299)], None),
    ("GET {p} HTTP/1.1\r\nhoSt:\texample.com\r\nempty:\r\n\r\n", "valid GET, odd case and tab", [(200, 299)], None),
    ("GET {p} HTTP/1.1\r\nHost: example.com\r\nX-Invalid[]: test\r\n\r\n", "bad header name", [(400, 499)], None),
    ("GET {p} HTTP/1.1\r\nContent-Length: 5\r\n\r\n", "no Host", [(400, 499)], None),
    ("GET {p} HTTP/1.1\r\nHost: example.com\r\nHost: example.org\r\n\r\n", "two Hosts", [(400, 499)], None),
    ("GET {p} HTTP/1.1\r\nHost: example.com\r\nContent-Length: -123456789123456789123456789\r\n\r\n",
     "overflowing negative length", [(400, 499)], None),
    ("GET {p} HTTP/1.1\r\nHost: example.com\r\nContent-Length: -1234\r\n\r\n", "negative length", [(400, 499)], None),
    ("GET {p} HTTP/1.1\r\nHost: example.com\r\nContent-Length: abc\r\n\r\n", "non-numeric length", [(400, 499)], None),
    ("GET {p} HTTP/1.1\r\nHost: example.com\r\nX-Empty-Header: \r\n\r\n", "empty value", [(200, 299)], None),
    ("GET {p} HTTP/1.1\r\nHost: example.com\r\nX-Bad-Control-Char: test\x07\r\n\r\n", "control byte in value",
     [(400, 499)], None),
    ("GET {p} HTTP/9.9\r\nHost: example.com\r\n\r\n", "unknown version", [(400, 599)], None),
    ("Extra lineGET {p} HTTP/1.1\r\nHost: example.com\r\n\r\n", "garbage before the method", [(400, 599)], None),
    ("GET {p} HTTP/1.1\r\nHost: example.com\r\n\rSome-Header: Test\r\n\r\n", "bare CR", [(400, 499)], None),
    ("POST {p} HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello", "POST with a body",
     [(200, 299), (404, 404)], b"hello"),
    ("POST {p} HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\nc\r\nHellO world1\r\n0\r\n\r\n",
     "chunked body", [(200, 299)], b"HellO world1"),
    ("POST {p} HTTP/1.1\r\nHost: example.com\r\ncontent-LengtH: 5\r\nTransFer-Encoding: chunked\r\n\r\n"
     "c\r\nHellO world1\r\n0\r\n\r\n", "TE with CL, odd case", [(400, 499), (200, 299)], b"HellO world1"),
]


def h1spec(args):
    demo = Demo(args.server)
    passed = 0
    try:
        for raw, what, want, echoed in H1SPEC:
            s = socket.create_connection((HOST, demo.port))
            s.sendall(raw.replace("{p}", args.path).encode("latin-1"))
            s.settimeout(0.5)
            try:
                first = s.recv(1024)
            except socket.timeout:
                first = None
            s.close()
            if want is None:
                ok = first is None
                got = "waited" if ok else repr(first[:12])
            else:
                code = int(first[9:12]) if first and first.startswith(b"HTTP/1.") else 0
                ok = any(lo <= code <= hi for lo, hi in want)
                if ok and code == 200 and echoed is not None:
                    ok = first.partition(b"\r\n\r\n")[2] == echoed
                got = code
            passed += ok
            if not ok or args.verbose:
                print(f"  {'ok  ' if ok else 'FAIL'} {what}: {got}")
        print(f"h1spec: {passed}/{len(H1SPEC)} passed (path {args.path})")
    finally:
        demo.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["shutdown", "slowread", "memory", "flood", "h1spec", "all"])
    p.add_argument("--server", default="target/release/kiln-demo")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--conns", type=int, default=None)
    p.add_argument("--seconds", type=float, default=3)
    p.add_argument("--path", default=None)
    p.add_argument("--rate", type=int, default=60_000)
    p.add_argument("--idle", type=int, default=1000)
    p.add_argument("--uploads", type=int, default=200)
    p.add_argument("--ramp", type=float, default=5)
    p.add_argument("--hold", type=float, default=5)
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args()
    commands = ["h1spec", "memory", "flood", "shutdown", "slowread"] if args.command == "all" else [args.command]
    for command in commands:
        run = argparse.Namespace(**vars(args))
        defaults = {"shutdown": (100, "/db"), "flood": (1000, "/static/1m.bin"), "h1spec": (0, "/")}
        conns, path = defaults.get(command, (0, "/"))
        run.conns = args.conns or conns
        run.path = args.path or path
        globals()[command](run)


if __name__ == "__main__":
    sys.exit(main())
