#!/usr/bin/env python3
"""Throwaway bounded client for kiln live views on 127.0.0.1 (not committed).

usage: liveclient.py PORT PATH N UPDATES [HOLD_SECONDS]
Opens N live sockets to PATH (one GET for token + cookie, then N WebSocket upgrades),
waits for each mount message, then sends UPDATES chat lines from socket 0 and waits
until every socket has a frame for each. Prints counts as JSON. With HOLD_SECONDS it
keeps the sockets open (idle) that long after mounting, printing 'mounted' first.
"""
import base64, json, os, re, select, socket, sys, time

port, path, n, updates = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
hold = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
DEADLINE = time.time() + 600

token, cookie = None, ""
s = socket.create_connection(("127.0.0.1", port)) if not path.startswith("/rooms/") else None

if s: s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
if s:
    page = b""
    while True:
        c = s.recv(65536)
        if not c:
            break
        page += c
    s.close()
    head, _, body = page.partition(b"\r\n\r\n")
    token = re.search(rb'data-kiln-token="([^"]+)"', body).group(1).decode()
    cookies = [m.group(1).decode() for m in re.finditer(rb"(?im)^set-cookie: ([^;\r\n]+)", head)]
    cookie = "; ".join(cookies)
req = (
    f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\nSec-WebSocket-Version: 13\r\n"
    + (f"Sec-WebSocket-Protocol: kiln-live, {token}\r\n" if token else "") + (f"Cookie: {cookie}\r\n" if cookie else "") + "\r\n"
).encode()

class Conn:
    def __init__(self):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setblocking(False)
        self.buf = b""
        self.upgraded = False
        self.frames = 0
        self.bytes = 0

def frame(payload: bytes) -> bytes:
    mask = os.urandom(4)
    head = bytes([0x81])
    ln = len(payload)
    head += bytes([0x80 | ln]) if ln < 126 else bytes([0x80 | 126]) + ln.to_bytes(2, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))

conns = []
ep = select.epoll()
by_fd = {}
for i in range(n):
    c = Conn()
    c.sock.setblocking(True)
    c.sock.sendall(req)
    c.sock.setblocking(False)
    conns.append(c)
    by_fd[c.sock.fileno()] = c
    ep.register(c.sock.fileno(), select.EPOLLIN)
    if i % 64 == 63:
        # Drain a little so the server's accept queue does not back up.
        for fd, _ in ep.poll(0):
            pass

def pump(timeout):
    for fd, _ in ep.poll(timeout):
        c = by_fd[fd]
        try:
            data = c.sock.recv(262144)
        except BlockingIOError:
            continue
        if not data:
            raise SystemExit(f"closed by server: {c.buf[:200]!r}")
        c.buf += data
        c.bytes += len(data)
        if not c.upgraded:
            if b"\r\n\r\n" not in c.buf:
                continue
            h, _, c.buf = c.buf.partition(b"\r\n\r\n")
            if not h.startswith(b"HTTP/1.1 101"):
                raise SystemExit(f"not upgraded: {h[:200]!r}")
            c.upgraded = True
        while len(c.buf) >= 2:
            ln = c.buf[1] & 0x7F
            off = 2
            if ln == 126:
                if len(c.buf) < 4:
                    break
                ln = int.from_bytes(c.buf[2:4], "big"); off = 4
            elif ln == 127:
                if len(c.buf) < 10:
                    break
                ln = int.from_bytes(c.buf[2:10], "big"); off = 10
            if len(c.buf) < off + ln:
                break
            c.buf = c.buf[off + ln:]
            c.frames += 1

while sum(c.frames for c in conns) < n:
    if time.time() > DEADLINE:
        raise SystemExit("mount deadline")
    pump(1.0)
print(json.dumps({"mounted": n}), flush=True)
if hold > 0:
    time.sleep(hold)
elif hold < 0:
    # The caller zeroes its counters, then makes the file named last.
    while not os.path.exists(sys.argv[6]):
        time.sleep(0.1)
for k in range(updates):
    conns[0].sock.setblocking(True)
    conns[0].sock.sendall(frame(json.dumps({"event": "Say", "form": f"text=line+{k}"}).encode()))
    conns[0].sock.setblocking(False)
    want = 1 + (k + 1)
    while min(c.frames for c in conns) < want:
        if time.time() > DEADLINE:
            raise SystemExit("update deadline")
        pump(1.0)
print(json.dumps({"sockets": n, "updates": updates, "frames": sum(c.frames for c in conns), "bytes": sum(c.bytes for c in conns)}), flush=True)
