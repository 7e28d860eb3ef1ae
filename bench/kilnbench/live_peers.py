"""The live-view benchmark's peers (LIVEBENCH.md): dioxus-liveview and Datastar's Rust SDK, each
on axum, each serving the counter, table and chat pages and their triggers on $PORT with one
worker. Sources in `bench/peers/<name>/` (their READMEs say how each follows its docs and what
its wire protocol looks like), built into `bench/.build/<name>/`.

For each: a `Server` (in `SERVERS`) and `recipe(port, page)`, what a browser's connection to
the page sends, found by asking the running server for the page as a browser would.

`python3 -m kilnbench.live_peers --check` (from bench/, through the lock: it builds) builds both,
starts each, and on each page follows the recipe with one raw socket, sees the first data
arrive, fires the trigger and sees the update carrying the new value; one line per peer and
page, exit 1 on any failure.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
from dataclasses import replace
from pathlib import Path
from typing import Callable

from .live_recipe import Recipe
from .servers import Launch, Options, Paths, Server, Step, cargo_peer

PAGES = ("counter", "table", "chat")
"""The pages every live server serves at /bench/live/<page>."""

TRIGGERS = {"counter": "bump", "table": "change", "chat": "say"}
"""Each page's trigger: POST /bench/live/<page>/<trigger>."""

LIVE_WORKLOADS = frozenset({"live-counter", "live-table", "live-chat"})
"""What these peers run: the live-view benchmark only (they serve nothing else but /pong)."""

WS_KEY = "dGhlIHNhbXBsZSBub25jZQ=="
"""The upgrade's Sec-WebSocket-Key: every connection sends the same bytes (RFC 6455's sample)."""

TIMEOUT = 5.0
"""Seconds any one step of a request or of the check may take."""


def _get(port: int, path: str) -> str:
    """The body of a GET that must answer 200."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read().decode()
        if resp.status != 200:
            raise RuntimeError(f"GET {path}: {resp.status}")
        return body
    finally:
        conn.close()


def _find(pattern: str, text: str, what: str) -> re.Match[str]:
    found = re.search(pattern, text)
    if not found:
        raise RuntimeError(f"the page has no {what}")
    return found


# ---------------------------------------------------------------- dioxus-liveview


def dioxus_recipe(port: int, page: str) -> Recipe:
    """The WebSocket the page's interpreter glue opens (`new WebSocket(WS_ADDR)`, the path
    read from the page), upgraded as a browser does. The client sends nothing first: the
    server sends the initial edits as soon as the socket is up (`hello` None)."""
    html = _get(port, f"/bench/live/{page}")
    path = _find(r'__dioxusGetWsUrl\("(/[^"]*)"\)', html, "WebSocket path in its interpreter glue").group(1)
    request = (
        f"GET {path} HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\n"
        "Connection: Upgrade\r\n"
        "Upgrade: websocket\r\n"
        f"Origin: http://127.0.0.1:{port}\r\n"
        "Sec-WebSocket-Version: 13\r\n"
        f"Sec-WebSocket-Key: {WS_KEY}\r\n"
        "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
        "\r\n"
    )
    return Recipe("ws", request.encode(), None)


# ---------------------------------------------------------------- datastar


def _signals(html: str) -> dict[str, object]:
    """The page's `data-signals` object literal (`{sort: 'id', desc: false}`) as JSON values."""
    found = re.search(r'data-signals="(\{[^"]*\})"', html)
    if not found:
        return {}
    literal = re.sub(r"([{,]\s*)(\w+)\s*:", r'\1"\2":', found.group(1)).replace("'", '"')
    return json.loads(literal)


def datastar_recipe(port: int, page: str) -> Recipe:
    """The SSE GET the page's `data-init="@get(...)"` makes: the client sends every signal (but
    `_`-prefixed ones) as JSON in the `datastar` query parameter, with its Accept and
    Datastar-Request headers (Datastar 1.0's fetch action)."""
    html = _get(port, f"/bench/live/{page}")
    url = _find(r"data-init=\"@get\('([^']+)'\)\"", html, "data-init stream").group(1)
    signals = {k: v for k, v in _signals(html).items() if not k.startswith("_")}
    query = urllib.parse.urlencode({"datastar": json.dumps(signals, separators=(",", ":"))})
    request = (
        f"GET {url}?{query} HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\n"
        "Accept: text/event-stream, text/html, application/json\r\n"
        "Datastar-Request: true\r\n"
        f"Referer: http://127.0.0.1:{port}/bench/live/{page}\r\n"
        "\r\n"
    )
    return Recipe("sse", request.encode(), None)


def _datastar() -> Server:
    """cargo_peer, plus the Datastar client its pages load (fetched at build time, see
    peers/datastar/README.md), whose path the peer gets in DATASTAR_JS."""
    base = cargo_peer(
        "datastar",
        "peer-datastar",
        ("datastar", "axum"),
        "Datastar Rust SDK (axum), SSE patch-elements per page, current-thread tokio runtime",
        LIVE_WORKLOADS,
    )

    def client(paths: Paths) -> Path:
        return paths.build / "datastar" / "datastar.js"

    def build(paths: Paths) -> list[Step]:
        fetch = Step(["sh", str(paths.peers / "datastar" / "fetch-client.sh"), str(client(paths))], paths.root)
        return [*base.build(paths), fetch]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        launched = base.launch(paths, port, opts)
        return replace(launched, env={**launched.env, "DATASTAR_JS": str(client(paths))})

    return replace(base, build=build, launch=launch, tools={**base.tools, "npm": "npm"})


SERVERS: list[Server] = [
    cargo_peer(
        "dioxus-liveview",
        "peer-dioxus-liveview",
        ("dioxus-liveview", "axum"),
        "dioxus-liveview (axum), LiveViewPool pinned to one CPU, current-thread tokio runtime",
        LIVE_WORKLOADS,
    ),
    _datastar(),
]

RECIPES: dict[str, Callable[[int, str], Recipe]] = {"dioxus-liveview": dioxus_recipe, "datastar": datastar_recipe}
"""Each peer's `recipe(port, page)`, by server name."""


# ---------------------------------------------------------------- the self-check


class Wire:
    """One raw connection following a recipe: what it received, and when it last did."""

    def __init__(self, port: int, recipe: Recipe):
        self.recipe = recipe
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.sock.sendall(recipe.request)
        self.buf = b""
        head = self._until(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0]
        want = b" 101 " if recipe.mode == "ws" else b" 200 "
        if want not in status + b" ":
            raise RuntimeError(f"answered {status.decode(errors='replace')!r}")
        self.buf = self.buf[len(head) :]
        if recipe.hello is not None:
            self.sock.sendall(_masked_text(recipe.hello))

    def _until(self, marker: bytes) -> bytes:
        deadline = time.monotonic() + TIMEOUT
        while marker not in self.buf:
            if time.monotonic() > deadline:
                raise RuntimeError("no answer")
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("closed before answering")
            self.buf += chunk
        return self.buf[: self.buf.index(marker) + len(marker)]

    def quiet(self, first_within: float, quiet: float = 0.3) -> bytes:
        """Everything that arrives until `quiet` seconds pass without a byte; something must
        arrive within `first_within` seconds (else an error)."""
        got, self.buf = self.buf, b""
        deadline = time.monotonic() + first_within
        while True:
            wait = quiet if got else deadline - time.monotonic()
            if wait <= 0:
                raise RuntimeError(f"nothing within {first_within} s")
            self.sock.settimeout(wait)
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                if got:
                    return got
                continue
            if not chunk:
                raise RuntimeError("the server closed the connection")
            got += chunk

    def close(self) -> None:
        self.sock.close()


def _masked_text(payload: bytes) -> bytes:
    """A client's text frame (short payloads only): masked, as RFC 6455 requires."""
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x81, 0x80 | len(payload)]) + mask + masked


def ws_payloads(raw: bytes) -> list[bytes]:
    """The payloads of the server's (unmasked) WebSocket frames in `raw`."""
    out, i = [], 0
    while i + 2 <= len(raw):
        n, i = raw[i + 1] & 0x7F, i + 2
        if n == 126:
            n, i = int.from_bytes(raw[i : i + 2], "big"), i + 2
        elif n == 127:
            n, i = int.from_bytes(raw[i : i + 8], "big"), i + 8
        out.append(raw[i : i + n])
        i += n
    return out


def _trigger(port: int, page: str, body: bytes = b"") -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        conn.request("POST", f"/bench/live/{page}/{TRIGGERS[page]}", body=body)
        resp = conn.getresponse()
        resp.read()
        if resp.status != 200:
            raise RuntimeError(f"trigger {page}: {resp.status}")
    finally:
        conn.close()


def _expected(name: str, page: str, n: int) -> tuple[bytes, bytes]:
    """What the check's trigger sends (the n-th of the page's, from 0) and what its update must
    carry: the new count, the changed row's new score, the line."""
    if page == "counter":
        return b"", str(n + 1).encode()
    if page == "table":
        row = n % 100 + 1
        score = row + n // 100 + 1
        return b"", (f'<td>{score}</td>' if name == "datastar" else str(score)).encode()
    text = f"hello from the check, {n}"
    return text.encode(), text.encode()


PRIMING = {"counter": 41, "table": 230, "chat": 0}
"""Triggers fired before a check's connection, so that the value its update must carry (count
42, row 31's score 34) is not one a page shows anyway."""


def check_page(name: str, port: int, page: str, show: bool) -> str:
    """Follows the recipe, sees the first data, fires the trigger, sees the new value."""
    for n in range(PRIMING[page]):
        _trigger(port, page, _expected(name, page, n)[0])
    wire = Wire(port, RECIPES[name](port, page))
    try:
        mount = wire.quiet(first_within=TIMEOUT)
        body, value = _expected(name, page, PRIMING[page])
        _trigger(port, page, body)
        update = wire.quiet(first_within=TIMEOUT)
    finally:
        wire.close()
    carried = b"".join(ws_payloads(update)) if wire.recipe.mode == "ws" else update
    if value not in carried:
        raise RuntimeError(f"the update ({len(update)} B) does not carry {value!r}: {update[:200]!r}")
    if show:
        print(f"  {name} {page} update on the wire: {update!r}")
    return f"mount {len(mount)} B, update {len(update)} B carrying {value.decode()!r}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_up(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode}")
        try:
            _get(port, "/pong")
            return
        except (OSError, RuntimeError, http.client.HTTPException):
            time.sleep(0.1)
    raise RuntimeError("not answering /pong within 10 s")


def check(paths: Paths, show: bool) -> bool:
    """Builds, starts and checks each peer; prints one line per peer and page."""
    ok = True
    for server in SERVERS:
        for step in server.build(paths):
            try:
                env = {**os.environ, **step.env}
                code = subprocess.run(step.argv, cwd=step.cwd, env=env, timeout=1800, check=False).returncode
            except subprocess.TimeoutExpired:
                code = "nothing (timed out after 30 min)"
            if code != 0:
                print(f"{server.name}: FAIL build: {' '.join(step.argv)} exited {code}", flush=True)
                ok = False
                break
        else:
            ok &= _check_running(paths, server, show)
    return ok


def _check_running(paths: Paths, server: Server, show: bool) -> bool:
    port = _free_port()
    launch = server.launch(paths, port, Options())
    proc = subprocess.Popen(launch.argv, env={**os.environ, **launch.env}, cwd=launch.cwd, start_new_session=True)
    ok = True
    try:
        _wait_up(port, proc)
        for page in PAGES:
            try:
                print(f"{server.name} {page}: ok: {check_page(server.name, port, page, show)}", flush=True)
            except (OSError, RuntimeError, http.client.HTTPException) as e:
                print(f"{server.name} {page}: FAIL: {e}", flush=True)
                ok = False
    except RuntimeError as e:
        print(f"{server.name}: FAIL start: {e}", flush=True)
        ok = False
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="build, start and check both peers")
    parser.add_argument("--show", action="store_true", help="with --check: print each update's bytes")
    args = parser.parse_args()
    if not args.check:
        parser.print_help()
        return 2
    return 0 if check(Paths(Path(__file__).resolve().parents[2]), args.show) else 1


if __name__ == "__main__":
    sys.exit(main())
