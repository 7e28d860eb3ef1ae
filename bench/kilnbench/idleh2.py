"""Idle HTTP/2 connections: open N, one request each, hold them while the server's RSS is read.

A minimal HTTP/2 client (RFC 9113) on blocking sockets, enough for this and no more: the
connection preface and an empty SETTINGS frame (§3.4), one HEADERS frame for `GET PATH`
(HPACK literals without Huffman, RFC 7541 §6.2.2, so no encoder is needed), an ACK of the
server's SETTINGS (§6.5.3), then frames are read until stream 1 ends. h2load cannot hold
connections open, and this needs no package. Connections open one after another, each
with a time limit, the whole with a deadline; then the caller reads the RSS and all close.
"""

from __future__ import annotations

import socket
import ssl
import struct
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS, HEADERS, DATA, RST_STREAM, GOAWAY = 0x4, 0x1, 0x0, 0x3, 0x7
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
CONNECT_TIMEOUT_S = 5.0
OPEN_DEADLINE_S = 120.0
OPENING_THREADS = 8
"""Connections being opened at once: well under any listen backlog."""
SETTLE_S = 1.0
"""Quiet time after the last connection before the RSS is read (the server frees its buffers)."""


def frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    """One frame: 24-bit length, type, flags, 31-bit stream id (RFC 9113 §4.1)."""
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _literal(index: int, value: str) -> bytes:
    """A literal header field without indexing, its name from the static table (RFC 7541 §6.2.2);
    values here are under 127 bytes, so the length is one octet with the Huffman bit clear."""
    raw = value.encode()
    if len(raw) >= 127:
        raise ValueError("value too long for this encoder")
    return bytes([index]) + bytes([len(raw)]) + raw


def request_headers(path: str, authority: str, tls: bool) -> bytes:
    """HPACK block for `GET path`: `:method GET` (static 2), `:scheme` (6 https / 7 http),
    `:path` (literal, name 4), `:authority` (literal, name 1)."""
    return bytes([0x82, 0x87 if tls else 0x86]) + _literal(4, path) + _literal(1, authority)


def client_hello(path: str, authority: str, tls: bool) -> bytes:
    """What the client sends first: preface, empty SETTINGS, the request on stream 1."""
    return PREFACE + frame(SETTINGS, 0, 0, b"") + frame(HEADERS, END_STREAM | END_HEADERS, 1, request_headers(path, authority, tls))


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def answer_one(sock: socket.socket) -> None:
    """Reads frames until stream 1 ends, ACKing the server's SETTINGS; raises if it is refused."""
    while True:
        head = _read_exactly(sock, 9)
        length = int.from_bytes(head[:3], "big")
        kind, flags, stream = head[3], head[4], int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
        _read_exactly(sock, length)
        if kind == SETTINGS and not flags & ACK:
            sock.sendall(frame(SETTINGS, ACK, 0, b""))
        elif kind in (RST_STREAM, GOAWAY):
            raise ConnectionError("refused (RST_STREAM or GOAWAY)")
        elif kind in (HEADERS, DATA) and stream == 1 and flags & END_STREAM:
            return


@dataclass
class Held:
    """What one idle run saw."""

    answered: int
    failed: int
    rss_before_kb: int
    rss_held_kb: int


def hold_idle(port: int, conns: int, path: str, tls: bool, rss_kb: Callable[[], int]) -> Held:
    """Opens `conns` HTTP/2 connections to 127.0.0.1:`port` (TLS with ALPN h2 if `tls`), one
    answered request each, reads `rss_kb()` before and while all are held, then closes them."""
    context = None
    if tls:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        context.set_alpn_protocols(["h2"])
    hello = client_hello(path, f"127.0.0.1:{port}", tls)
    deadline = time.monotonic() + OPEN_DEADLINE_S

    def open_one(_: int) -> socket.socket | None:
        if time.monotonic() > deadline:
            return None
        sock: socket.socket | None = None
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=CONNECT_TIMEOUT_S)
            if context is not None:
                sock = context.wrap_socket(sock, server_hostname="localhost")
                if sock.selected_alpn_protocol() != "h2":
                    raise ConnectionError("ALPN did not choose h2")
            sock.sendall(hello)
            answer_one(sock)
            return sock
        except (OSError, ConnectionError):
            if sock is not None:
                sock.close()
            return None

    time.sleep(SETTLE_S)
    before = rss_kb()
    with ThreadPoolExecutor(OPENING_THREADS) as pool:
        opened = list(pool.map(open_one, range(conns)))
    held = [sock for sock in opened if sock is not None]
    try:
        time.sleep(SETTLE_S)
        return Held(len(held), conns - len(held), before, rss_kb())
    finally:
        for sock in held:
            sock.close()
