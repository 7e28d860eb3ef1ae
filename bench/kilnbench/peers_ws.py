"""Issue 23's WebSocket echo peers: servers that answer `GET /ws/echo` as a WebSocket and echo
every text and binary message as sent, one worker or thread each, on $PORT. Each also answers
`GET /pong` (`PONG`), which the runner's readiness check and warm-up use.

They run only the `ws` workloads; `ws-echo-16k-deflate` only where permessage-deflate is
negotiated when offered (Go's gorilla/websocket and Node's ws: kiln has it too, the Rust peers
and the C floor do not). Sources in `bench/peers/<name>/`, built into `bench/.build/<name>/`.

Each runs with its library's defaults, as a user would get them, except TCP_NODELAY (on for
all, as in kiln). So axum-ws' idle memory is tungstenite's: a 128 KiB read buffer per socket
(`WebSocketConfig::read_buffer_size`), about 100 KB of RSS per idle WebSocket.
"""

from __future__ import annotations

from .servers import Launch, Options, Paths, Server, Step, _first_line, _peer_env, cargo_peer

WS_ECHO = frozenset({"ws-echo-20", "ws-echo-16k", "ws-idle-10k"})
"""The WebSocket workloads every echo peer runs."""

WS_ECHO_DEFLATE = WS_ECHO | {"ws-echo-16k-deflate"}
"""...and with the compressed one, for peers that negotiate permessage-deflate (RFC 7692)."""


def go_ws() -> Server:
    """Go net/http + gorilla/websocket, GOMAXPROCS=1, compression negotiated when offered."""

    def build(paths: Paths) -> list[Step]:
        out = paths.build / "go-ws" / "peer-go-ws"
        return [Step(["go", "build", "-o", str(out), "."], paths.peers / "go-ws", {"CGO_ENABLED": "0"})]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        env = _peer_env(paths, port, opts) | {"GOMAXPROCS": "1"}
        return Launch([str(paths.build / "go-ws" / "peer-go-ws")], env)

    def version(paths: Paths) -> str:
        mod = (paths.peers / "go-ws" / "go.mod").read_text()
        gorilla = next((line.split()[-1] for line in mod.splitlines() if "gorilla/websocket" in line), "?")
        return f"gorilla/websocket {gorilla}, {_first_line(['go', 'version'])}"

    return Server(
        "go-ws",
        "Go net/http + gorilla/websocket, GOMAXPROCS=1, permessage-deflate when offered",
        build,
        launch,
        version,
        tools={"go": "golang-go"},
        workloads=WS_ECHO_DEFLATE,
    )


def node_ws() -> Server:
    """Node.js http + the `ws` package (npm ci into the peer's folder), one process."""

    def build(paths: Paths) -> list[Step]:
        return [Step(["npm", "ci", "--no-audit", "--no-fund"], paths.peers / "node-ws")]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        return Launch(["node", str(paths.peers / "node-ws" / "server.js")], _peer_env(paths, port, opts))

    def version(paths: Paths) -> str:
        ws = _first_line(["node", "-p", "require('ws/package.json').version"], paths.peers / "node-ws")
        return f"ws {ws}, node {_first_line(['node', '--version'])}"

    return Server(
        "node-ws",
        "Node.js http + ws, one process, permessage-deflate when offered",
        build,
        launch,
        version,
        tools={"node": "nodejs", "npm": "npm"},
        workloads=WS_ECHO_DEFLATE,
    )


SERVERS: list[Server] = [
    cargo_peer(
        "axum-ws",
        "peer-axum-ws",
        ("axum", "tungstenite"),
        "axum 0.8 ws (tungstenite), current-thread tokio runtime",
        WS_ECHO,
    ),
    cargo_peer(
        "fastwebsockets",
        "peer-fastwebsockets",
        ("fastwebsockets", "hyper"),
        "fastwebsockets on hyper 1 (upgrade), current-thread tokio runtime",
        WS_ECHO,
    ),
    cargo_peer("actix-ws", "peer-actix-ws", ("actix-web", "actix-ws"), "actix-web 4 + actix-ws, 1 worker", WS_ECHO),
    go_ws(),
    node_ws(),
]
