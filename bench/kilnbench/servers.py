"""The registry of servers: kiln and every peer under bench/peers/<name>/.

Adding a server is one folder under bench/peers/ and one entry in `SERVERS`
(usually one call to `cargo_peer`, `command_peer`, ...). An entry says how to
build the server, how to start it on a given port with one worker, and how to
name its version. Every peer reads its port from `PORT`, the static-file folder
from `STATIC_DIR` and, if it talks to a database, its URL from `DATABASE_URL`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Callable


@dataclass(frozen=True)
class Paths:
    """Where things live, all absolute."""

    root: Path

    @property
    def bench(self) -> Path:
        return self.root / "bench"

    @property
    def peers(self) -> Path:
        return self.bench / "peers"

    @property
    def build(self) -> Path:
        return self.bench / ".build"

    @property
    def static(self) -> Path:
        # The very folder kiln-demo serves at /static/, so every server sends the same files.
        return self.root / "app" / "public"


@dataclass(frozen=True)
class Step:
    """One build command."""

    argv: list[str]
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Launch:
    """How to start a server: the command, its environment, and files to delete once it stops."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    cleanup: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Options:
    """Run-wide settings a server may need at start."""

    database_url: str | None = None


ACCESS_LOG_WORKLOADS = frozenset({"pong", "static", "pong-httperf", "static-httperf"})
"""What a log-on variant runs: Snap's pong and file, to compare with the same server's log-off rows."""

OBSERVE_WORKLOADS = frozenset({"pong", "hello", "json", "wiki"})
"""Where `/metrics` and request spans are weighed against kiln without them (issue 25: within 3 %)."""

FILE_WORKLOADS = frozenset({"static", "static-1m", "static-httperf"})
"""What a variant that only changes file serving runs."""

DB_WORKLOADS = frozenset({"db", "queries", "fortunes", "updates"})
"""What a database-only peer runs: the TechEmpower database endpoints."""

WIKI_WORKLOADS = frozenset({"wiki", "wiki-views"})
"""What a wiki peer runs: the demo site's long page (docs/wiki-page.md)."""

H2C_WORKLOADS = frozenset({"pong-h2c-m10", "pong-h2c-m100", "static-h2c-m10", "static-h2c-m100"})
"""What an HTTP/2 variant of a peer runs here (`--workloads h2`); `kilnbench.h2` runs the rest."""

"""What a wiki peer runs: the demo site's long page (docs/wiki-page.md)."""


class Unsupported(RuntimeError):
    """This server cannot run in this configuration (e.g. a flag kiln does not have yet)."""


@dataclass(frozen=True)
class Server:
    """One entry of the registry."""

    name: str
    description: str
    build: Callable[[Paths], list[Step]]
    launch: Callable[[Paths, int, Options], Launch]
    version: Callable[[Paths], str]
    tools: dict[str, str] = field(default_factory=dict)
    """Executables it needs, each with the Debian package that provides it."""
    workloads: frozenset[str] | None = None
    """If set, only these workloads run (the floor answers every path alike)."""
    checks_body: bool = True
    """Whether probes check the response body against the contract."""


def _output(argv: list[str], cwd: Path | None = None) -> str:
    """Everything a command prints (stdout then stderr), stripped; "" if it cannot run."""
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (done.stdout + done.stderr).strip()


def _first_line(argv: list[str], cwd: Path | None = None) -> str:
    """The first line a command prints, for version strings."""
    lines = _output(argv, cwd).splitlines()
    return lines[0] if lines else "unknown"


def _locked_version(lock: Path, crate: str) -> str:
    try:
        text = lock.read_text()
    except OSError:
        return "?"
    found = re.search(rf'name = "{re.escape(crate)}"\nversion = "([^"]+)"', text)
    return found.group(1) if found else "?"


def debian_packages(paths: Paths, *packages: str) -> Step:
    """A build step that installs the Debian `packages` not yet installed (apt-get, as root;
    it says so when it installs)."""
    return Step([sys.executable, "-m", "kilnbench.install", *packages], paths.bench)


def is_postgres(url: str | None) -> bool:
    """Whether a `--database` URL names a PostgreSQL server."""
    return bool(url) and url.startswith(("postgres://", "postgresql://"))


def sqlite_path(url: str | None, root: Path) -> Path | None:
    """The file a `sqlite://PATH` URL names, a relative PATH taken from the checkout as kiln
    takes it; None for any other URL."""
    if not url or not url.startswith("sqlite://") or url == "sqlite://":
        return None
    return root / url.removeprefix("sqlite://")


def _peer_env(paths: Paths, port: int, opts: Options) -> dict[str, str]:
    env = {"PORT": str(port), "STATIC_DIR": str(paths.static)}
    if opts.database_url:
        env["DATABASE_URL"] = opts.database_url
    return env


# ---------------------------------------------------------------- kiln


def _kiln_binary(paths: Paths) -> Path:
    """A copy of the freshly built kiln-demo: others rebuilding target/ mid-run cannot swap it."""
    return paths.build / "kiln" / "kiln-demo"


def _kiln_flags(paths: Paths) -> str:
    """kiln-demo's --help: which flags this build of kiln already has."""
    return _output([str(_kiln_binary(paths)), "--help"])


def kiln(name: str, access_log: bool, observe: bool = False) -> Server:
    """kiln-demo from this checkout, one worker; `access_log` turns its access log on,
    `observe` its `/metrics` and per-request tracing spans (their cost on the request path)."""

    def build(paths: Paths) -> list[Step]:
        built = paths.root / "target" / "release" / "kiln-demo"
        (paths.build / "kiln").mkdir(parents=True, exist_ok=True)
        return [
            Step(["cargo", "build", "--release", "-p", "kiln-demo"], paths.root),
            Step(["cp", str(built), str(_kiln_binary(paths))], paths.root),
        ]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        flags = _kiln_flags(paths)
        argv = [str(_kiln_binary(paths)), "--workers", "1", "--listen", f"127.0.0.1:{port}"]
        cleanup: tuple[Path, ...] = ()
        if "--access-log" in flags:
            log = paths.build / "logs" / f"{name}-access.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            argv += ["--access-log", str(log) if access_log else "off"]
            cleanup = (log,)
        elif access_log:
            raise Unsupported("kiln-demo has no --access-log flag yet")
        if opts.database_url and "--database" in flags:
            argv += ["--database", opts.database_url]
        if observe:
            if "--request-spans" not in flags:
                raise Unsupported("kiln-demo has no --metrics/--request-spans flags yet")
            argv += ["--metrics", "--request-spans"]
        return Launch(argv, cwd=paths.root, cleanup=cleanup)

    def version(paths: Paths) -> str:
        rev = _first_line(["git", "rev-parse", "--short", "HEAD"], paths.root)
        dirty = _output(["git", "status", "--porcelain", "--", "crates", "app", "Cargo.lock"], paths.root)
        state = " + uncommitted changes" if dirty else ""
        binary = _first_line([str(_kiln_binary(paths)), "--version"])
        return f"{binary} (git {rev}{state}), {_first_line(['rustc', '--version'])}"

    what = "kiln-demo, access log on" if access_log else "kiln-demo, access log off"
    if observe:
        what += ", /metrics and request spans on"
    only = ACCESS_LOG_WORKLOADS if access_log else OBSERVE_WORKLOADS if observe else None
    return Server(name, what, build, launch, version, tools={"cargo": "cargo"}, workloads=only)


# ---------------------------------------------------------------- peers


def cargo_peer(
    name: str,
    binary: str,
    crates: str | tuple[str, ...],
    description: str,
    workloads: frozenset[str] | None = None,
    postgres: bool = False,
    sqlite: bool = False,
    folder: str | None = None,
    features: str | None = None,
) -> Server:
    """A Rust peer: its own cargo project in peers/<name>, built into .build/<name>.

    `crates` are the crates whose locked versions name it; `workloads`, if set, are all
    it runs; a `postgres` peer only starts when the run has a PostgreSQL `--database`,
    an `sqlite` one when it has `sqlite://PATH` (run from the checkout, as kiln is, so a
    relative PATH is the same file). A variant builds another peer's project (`folder`)
    with cargo `features`, still into .build/<name>.
    """
    project = folder or name

    def build(paths: Paths) -> list[Step]:
        manifest = paths.peers / project / "Cargo.toml"
        target = paths.build / name
        argv = ["cargo", "build", "--release", "--manifest-path", str(manifest), "--target-dir", str(target)]
        return [Step(argv + (["--features", features] if features else []), paths.root)]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        if postgres and not is_postgres(opts.database_url):
            raise Unsupported("a PostgreSQL peer: run with --database postgres://...")
        if sqlite and sqlite_path(opts.database_url, paths.root) is None:
            raise Unsupported("an SQLite peer: run with --database sqlite://PATH")
        return Launch([str(paths.build / name / "release" / binary)], _peer_env(paths, port, opts), cwd=paths.root)

    def version(paths: Paths) -> str:
        lock = paths.peers / project / "Cargo.lock"
        named = ", ".join(f"{c} {_locked_version(lock, c)}" for c in ((crates,) if isinstance(crates, str) else crates))
        return f"{named}, {_first_line(['rustc', '--version'])}"

    return Server(name, description, build, launch, version, tools={"cargo": "cargo"}, workloads=workloads)


def c_peer(name: str, source: str, description: str, workloads: frozenset[str] | None = None) -> Server:
    """A one-file C program under bench/peers (`source`, e.g. `floor/floor.c`), built with
    `cc -O2` into bench/.build/<its folder>/ and started with PORT set; its body is not checked."""
    folder, file = source.split("/")
    binary = file.removesuffix(".c")

    def build(paths: Paths) -> list[Step]:
        (paths.build / folder).mkdir(parents=True, exist_ok=True)
        return [Step(["cc", "-O2", "-o", str(paths.build / folder / binary), str(paths.peers / source)], paths.root)]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        return Launch([str(paths.build / folder / binary)], _peer_env(paths, port, opts))

    return Server(
        name,
        description,
        build,
        launch,
        lambda paths: _first_line(["cc", "--version"]),
        tools={"cc": "gcc"},
        workloads=workloads,
        checks_body=False,
    )


def floor() -> Server:
    return c_peer(
        "floor",
        "floor/floor.c",
        "C epoll loop, one canned response per read, no parsing: the machine's limit",
        frozenset({"pong", "hello", "plaintext", "hello-ab", "pong-httperf", "idle-10k"}),
    )

def go() -> Server:
    def build(paths: Paths) -> list[Step]:
        out = paths.build / "go" / "peer-go"
        return [Step(["go", "build", "-o", str(out), "."], paths.peers / "go", {"CGO_ENABLED": "0"})]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        env = _peer_env(paths, port, opts) | {"GOMAXPROCS": "1"}
        return Launch([str(paths.build / "go" / "peer-go")], env)

    return Server("go", "Go net/http, GOMAXPROCS=1", build, launch, lambda p: _first_line(["go", "version"]), tools={"go": "golang-go"})


def node() -> Server:
    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        return Launch(["node", str(paths.peers / "node" / "server.js")], _peer_env(paths, port, opts))

    return Server(
        "node",
        "Node.js http module, one process",
        lambda paths: [],
        launch,
        lambda p: "node " + _first_line(["node", "--version"]),
        tools={"node": "nodejs"},
    )


def tornado() -> Server:
    def venv(paths: Paths) -> Path:
        return paths.build / "tornado" / "venv"

    def build(paths: Paths) -> list[Step]:
        requirements = paths.peers / "tornado" / "requirements.txt"
        return [
            Step(["python3", "-m", "venv", str(venv(paths))], paths.root),
            Step([str(venv(paths) / "bin" / "pip"), "install", "-q", "-r", str(requirements)], paths.root),
        ]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        python = str(venv(paths) / "bin" / "python")
        return Launch([python, str(paths.peers / "tornado" / "server.py")], _peer_env(paths, port, opts))

    def version(paths: Paths) -> str:
        python = str(venv(paths) / "bin" / "python")
        return "tornado " + _first_line([python, "-c", "import sys, tornado; print(tornado.version, 'on Python', sys.version.split()[0])"])

    return Server("tornado", "Python tornado, one process", build, launch, version, tools={"python3": "python3"})


def nginx(name: str, open_file_cache: bool, access_log: bool, workloads: frozenset[str] | None = None) -> Server:
    """nginx from Debian, one worker, config rendered from peers/nginx/nginx.conf.template."""

    def prefix(paths: Paths) -> Path:
        return paths.build / "nginx" / name

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        home = prefix(paths)
        home.mkdir(parents=True, exist_ok=True)
        log = home / "access.log"
        template = Template((paths.peers / "nginx" / "nginx.conf.template").read_text())
        conf = template.substitute(
            prefix=home,
            port=port,
            static=paths.static,
            user="user root;" if os.geteuid() == 0 else "",
            access_log=f"{log} combined buffer=64k" if access_log else "off",
            open_file_cache=(
                "open_file_cache max=1000 inactive=60s; open_file_cache_valid 60s;" if open_file_cache else "open_file_cache off;"
            ),
        )
        (home / "nginx.conf").write_text(conf)
        argv = ["nginx", "-p", str(home), "-e", str(home / "error.log"), "-c", str(home / "nginx.conf")]
        return Launch(argv, cleanup=(log,))

    cache = "open_file_cache on" if open_file_cache else "open_file_cache off"
    log = "access log on" if access_log else "access log off"
    return Server(
        name,
        f"nginx, 1 worker, {cache}, {log}",
        lambda paths: [],
        launch,
        lambda p: _first_line(["nginx", "-v"]),
        tools={"nginx": "nginx"},
        workloads=workloads,
    )


def ws_floor() -> Server:
    """The WebSocket echo floor (bench/peers/floor/ws_floor.c): unmasks and echoes, nothing else."""
    return c_peer(
        "ws-floor",
        "floor/ws_floor.c",
        "C epoll WebSocket echo: unmasks and echoes each read's frames in one write, no validation",
        frozenset({"ws-echo-20", "ws-echo-16k", "ws-idle-10k"}),
    )


SERVERS: list[Server] = [
    kiln("kiln", access_log=False),
    kiln("kiln+log", access_log=True),
    kiln("kiln+metrics", access_log=False, observe=True),
    floor(),
    ws_floor(),
    cargo_peer("actix", "peer-actix", "actix-web", "actix-web 4, 1 worker; bigtable with maud"),
    cargo_peer("axum", "peer-axum", "axum", "axum on a current-thread tokio runtime"),
    cargo_peer(
        "axum-h2",
        "peer-axum",
        ("axum", "hyper"),
        "axum with http2 (h2c by prior knowledge beside HTTP/1.1), current-thread runtime; see kilnbench.h2",
        H2C_WORKLOADS,
        folder="axum",
        features="h2",
    ),
    cargo_peer("may-minihttp", "peer-may-minihttp", "may_minihttp", "may-minihttp, 1 worker"),
    cargo_peer(
        "actix-pg",
        "peer-actix-pg",
        ("actix-web", "tokio-postgres"),
        "actix-web 4 + tokio-postgres, 1 worker, one pipelined connection, prepared statements",
        DB_WORKLOADS,
        postgres=True,
    ),
    cargo_peer(
        "xitca-pg",
        "peer-xitca-pg",
        ("xitca-http", "xitca-postgres"),
        "xitca-http + xitca-postgres (the TechEmpower xitca-web stack), 1 worker, one pipelined connection, prepared statements",
        DB_WORKLOADS,
        postgres=True,
    ),
    cargo_peer(
        "may-minihttp-pg",
        "peer-may-minihttp-pg",
        ("may_minihttp", "may_postgres"),
        "may-minihttp + may_postgres (git), 1 worker, one pipelined connection, prepared statements",
        DB_WORKLOADS,
        postgres=True,
    ),
    cargo_peer(
        "axum-sqlite",
        "peer-axum-sqlite",
        ("axum", "tokio-rusqlite", "rusqlite"),
        "axum + tokio-rusqlite, current-thread runtime, one writer and reader connections (WAL), cached statements",
        DB_WORKLOADS,
        sqlite=True,
    ),
    cargo_peer(
        "axum-wiki",
        "peer-axum-wiki",
        ("axum", "tokio-rusqlite", "pulldown-cmark", "maud"),
        "axum + tokio-rusqlite, current-thread runtime, one writer and reader connections (WAL), cached statements; "
        "pulldown-cmark per request, maud layout",
        WIKI_WORKLOADS,
        sqlite=True,
    ),
    cargo_peer(
        "actix-wiki",
        "peer-actix-wiki",
        ("actix-web", "r2d2_sqlite", "pulldown-cmark", "maud"),
        "actix-web 4, 1 worker + r2d2_sqlite pool (WAL, cached statements) through web::block; "
        "pulldown-cmark per request, maud layout",
        WIKI_WORKLOADS,
        sqlite=True,
    ),
    go(),
    node(),
    tornado(),
    nginx("nginx", open_file_cache=True, access_log=False),
    nginx("nginx-nocache", open_file_cache=False, access_log=False, workloads=FILE_WORKLOADS),
    nginx("nginx+log", open_file_cache=True, access_log=True, workloads=ACCESS_LOG_WORKLOADS),
]

BY_NAME = {s.name: s for s in SERVERS}
