"""The reports' functional-language and JVM systems as peers: Ocsigen (ocsigenserver with an
Eliom module, and the standalone native executable), Warp, Yesod, Snap (access log off and
on), Happstack, Yaws and Jetty 12 (standing in for Scalatra and Play, which cannot be had here).

Each entry installs what it lacks itself, through a build step that runs
`python3 -m kilnbench.install PACKAGE...` (apt-get, as root; it says so when
it installs), builds into `bench/.build/<folder>/` (ghc, ocamlfind, erlc, mvn), and runs on
one core: GHC's `+RTS -N1`, the JVM's `-XX:ActiveProcessorCount=1`, Erlang's `+S 1`; Ocsigen
is one process (its Lwt thread pool included). Every one runs in the foreground, so the
runner's SIGTERM to its process group stops it.
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

from .install import debian_version
from .servers import ACCESS_LOG_WORKLOADS, Launch, Options, Paths, Server, Step, _first_line, _output, _peer_env, debian_packages
from .workloads import BY_NAME as WORKLOADS

OCSIGEN_PACKAGES = (
    "ocsigenserver",
    "libocsigenserver-ocaml-dev",
    "libeliom-ocaml-dev",
    # Eliom needs a persistent store loaded before it; without recommends, apt-get leaves it out.
    "libocsipersist-sqlite-ocaml-dev",
    "ocaml-nox",
    "ocaml-findlib",
)
GHC = "ghc"
YAWS_PACKAGES = ("yaws", "erlang-base")

SNAP_LOG_WORKLOADS = frozenset(
    name for name in ACCESS_LOG_WORKLOADS | {"pong-httperf-burst", "file-httperf-burst"} if name in WORKLOADS
)
"""What Snap with its access log on runs: the Snap report's pong and file, to set beside the
same server's rows with the log off."""

RUN_ON_ONE_CORE = ["+RTS", "-N1", "-RTS"]
"""A GHC program's runtime options: one capability, the suite's one server core."""




def _render(template: Path, out: Path, **values: object) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(Template(template.read_text()).substitute({k: str(v) for k, v in values.items()}))
    return out


# ---------------------------------------------------------------- Haskell


def _ghc_package_version(package: str) -> str:
    found = _output(["ghc-pkg", "--simple-output", "field", package, "version"]).split()
    return found[-1] if found else "?"


def haskell(
    name: str,
    folder: str,
    description: str,
    libraries: tuple[str, ...],
    packages: tuple[str, ...],
    access_log: bool = False,
) -> Server:
    """A GHC program in peers/<folder>/Main.hs against Debian's Haskell libraries, built with
    `ghc -O2 -threaded -rtsopts` and run with `+RTS -N1`; `libraries` name its version;
    `access_log` hands it a log file in ACCESS_LOG (Snap's), else "off"."""

    def binary(paths: Paths) -> Path:
        return paths.build / folder / f"peer-{folder}"

    def build(paths: Paths) -> list[Step]:
        home = paths.build / folder
        home.mkdir(parents=True, exist_ok=True)
        compile_ = ["ghc", "-O2", "-threaded", "-rtsopts", "-outputdir", str(home / "obj"), "-o", str(binary(paths))]
        return [debian_packages(paths, GHC, *packages), Step([*compile_, str(paths.peers / folder / "Main.hs")], paths.root)]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        env = _peer_env(paths, port, opts)
        cleanup: tuple[Path, ...] = ()
        if access_log:
            log = paths.build / "logs" / f"{name}-access.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            env["ACCESS_LOG"] = str(log)
            cleanup = (log,)
        else:
            env["ACCESS_LOG"] = "off"
        return Launch([str(binary(paths)), *RUN_ON_ONE_CORE], env, cleanup=cleanup)

    def version(paths: Paths) -> str:
        named = ", ".join(f"{lib} {_ghc_package_version(lib)}" for lib in libraries)
        return f"{named}, GHC {_first_line(['ghc', '--numeric-version'])}"

    only = SNAP_LOG_WORKLOADS if access_log else None
    return Server(name, description, build, launch, version, tools={"ghc": "ghc"}, workloads=only)


# ---------------------------------------------------------------- Ocsigen


def _ocsigen_version(paths: Paths) -> str:
    ocaml = _first_line(["ocamlfind", "ocamlopt", "-version"])
    return f"ocsigenserver {debian_version('ocsigenserver')}, eliom {debian_version('libeliom-ocaml-dev')}, OCaml {ocaml}"


def _ocsigen_run_dir(home: Path) -> Path:
    """Where a started Ocsigen keeps its logs, data (the SQLite store) and command pipe."""
    run = home / "run"
    for sub in ("log", "data"):
        (run / sub).mkdir(parents=True, exist_ok=True)
    return run


def ocsigen() -> Server:
    """ocsigenserver with the contract's services as an Eliom module (peer.cmxs), config
    rendered from peers/ocsigen/ocsigen.conf.template."""

    def home(paths: Paths) -> Path:
        return paths.build / "ocsigen"

    def build(paths: Paths) -> list[Step]:
        home(paths).mkdir(parents=True, exist_ok=True)
        sources = [str(paths.peers / "ocsigen" / f) for f in ("peer_services.ml", "peer_module.ml")]
        compile_ = ["ocamlfind", "ocamlopt", "-thread", "-package", "eliom.server", "-shared", "-o", "peer.cmxs"]
        return [
            debian_packages(paths, *OCSIGEN_PACKAGES),
            # ocamlopt writes its objects beside the sources: build copies of them.
            Step(["cp", *sources, str(home(paths))], paths.root),
            Step([*compile_, "peer_services.ml", "peer_module.ml"], home(paths)),
        ]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        run = _ocsigen_run_dir(home(paths))
        conf = _render(
            paths.peers / "ocsigen" / "ocsigen.conf.template",
            run / "ocsigen.conf",
            port=port,
            run=run,
            static=paths.static,
            module=home(paths) / "peer.cmxs",
        )
        # Ocsigen always writes an access log; it is not what this entry measures, so it goes.
        return Launch(["ocsigenserver.opt", "-c", str(conf)], cwd=run, cleanup=(run / "log" / "access.log",))

    return Server(
        "ocsigen",
        "ocsigenserver + an Eliom module (peer.cmxs), one process, files by staticmod; its access log is always on",
        build,
        launch,
        _ocsigen_version,
        tools={"ocamlfind": "ocaml-findlib"},
    )


def ocsigen_standalone() -> Server:
    """The standalone native executable: ocsigenserver, staticmod, Eliom and the services linked
    into one program configured in code (peers/ocsigen-standalone/build.sh fixes the link order)."""

    def home(paths: Paths) -> Path:
        return paths.build / "ocsigen-standalone"

    def build(paths: Paths) -> list[Step]:
        script = paths.peers / "ocsigen-standalone" / "build.sh"
        return [debian_packages(paths, *OCSIGEN_PACKAGES), Step(["sh", str(script), str(home(paths))], paths.root)]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        run = _ocsigen_run_dir(home(paths))
        env = _peer_env(paths, port, opts) | {"RUN_DIR": str(run)}
        argv = [str(home(paths) / "peer-ocsigen-standalone")]
        return Launch(argv, env, cwd=run, cleanup=(run / "log" / "access.log",))

    return Server(
        "ocsigen-standalone",
        "Ocsigen as one native executable (ocsigenserver + staticmod + Eliom linked in, configured in code); "
        "its access log is always on",
        build,
        launch,
        _ocsigen_version,
        tools={"ocamlfind": "ocaml-findlib"},
    )


# ---------------------------------------------------------------- Yaws


def yaws() -> Server:
    """Yaws with an appmod (peers/yaws/kiln_peer.erl) for /pong and /hello and its own file
    serving for /static/, one scheduler; config from peers/yaws/yaws.conf.template."""

    def home(paths: Paths) -> Path:
        return paths.build / "yaws"

    def build(paths: Paths) -> list[Step]:
        ebin = home(paths) / "ebin"
        ebin.mkdir(parents=True, exist_ok=True)
        source = paths.peers / "yaws" / "kiln_peer.erl"
        return [
            debian_packages(paths, *YAWS_PACKAGES),
            Step(["erlc", "-I", "/usr/lib/yaws/include", "-o", str(ebin), str(source)], paths.root),
        ]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        run = home(paths) / "run"
        docroot = run / "docroot"
        (run / "log").mkdir(parents=True, exist_ok=True)
        docroot.mkdir(parents=True, exist_ok=True)
        link = docroot / "static"
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(paths.static, target_is_directory=True)
        conf = _render(
            paths.peers / "yaws" / "yaws.conf.template", run / "yaws.conf", port=port, run=run, ebin=home(paths) / "ebin"
        )
        # -i keeps Yaws in the foreground (in the runner's process group); Yaws writes under HOME.
        argv = ["yaws", "-i", "--nodebug", "--conf", str(conf), "--erlarg", "-noshell +S 1"]
        return Launch(argv, {"HOME": str(run)}, cwd=run)

    def version(paths: Paths) -> str:
        otp = _first_line(["erl", "-noshell", "-eval", 'io:format("~s", [erlang:system_info(otp_release)]), halt().'])
        return f"{_first_line(['yaws', '--version'])}, Erlang/OTP {otp}"

    return Server(
        "yaws",
        "Yaws (Erlang), an appmod for /pong and /hello, its file serving for /static/, one scheduler (+S 1), access log off",
        build,
        launch,
        version,
        tools={"yaws": "yaws"},
    )


# ---------------------------------------------------------------- Jetty


def _pom_property(pom: Path, name: str) -> str:
    try:
        found = re.search(rf"<{re.escape(name)}>([^<]+)</{re.escape(name)}>", pom.read_text())
    except OSError:
        return "?"
    return found.group(1) if found else "?"


def jetty() -> Server:
    """Jetty 12's core Handler API (peers/jetty), built by Maven into .build/jetty; the JVM told
    it has one processor."""

    def home(paths: Paths) -> Path:
        return paths.build / "jetty"

    def build(paths: Paths) -> list[Step]:
        pom = paths.peers / "jetty" / "pom.xml"
        return [Step(["mvn", "-q", "-B", "-f", str(pom), f"-Dkiln.build={home(paths)}", "package"], paths.root)]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        classpath = f"{home(paths) / 'peer-jetty-1.jar'}:{home(paths) / 'lib'}/*"
        argv = ["java", "-XX:ActiveProcessorCount=1", "-cp", classpath, "kiln.peer.Main"]
        return Launch(argv, _peer_env(paths, port, opts))

    def version(paths: Paths) -> str:
        jetty_version = _pom_property(paths.peers / "jetty" / "pom.xml", "jetty.version")
        return f"Jetty {jetty_version}, {_first_line(['java', '-version'])}"

    return Server(
        "jetty",
        "Jetty 12 core handlers (stand-in for Scalatra/Play, not to be had here), one JVM told it has 1 processor",
        build,
        launch,
        version,
        tools={"mvn": "maven", "java": "default-jdk-headless"},
    )


SERVERS: list[Server] = [
    ocsigen(),
    ocsigen_standalone(),
    haskell(
        "warp",
        "warp",
        "Warp (WAI), +RTS -N1; bigtable with blaze-html",
        ("warp", "wai"),
        ("libghc-warp-dev", "libghc-wai-dev", "libghc-http-types-dev"),
    ),
    haskell(
        "yesod",
        "yesod",
        "Yesod on Warp, +RTS -N1, no sessions, no logging; bigtable with Hamlet",
        ("yesod-core", "warp"),
        ("libghc-yesod-core-dev", "libghc-warp-dev", "libghc-wai-dev", "libghc-http-types-dev"),
    ),
    haskell(
        "snap",
        "snap",
        "Snap, +RTS -N1, access log off; bigtable with blaze-html",
        ("snap-server", "snap-core"),
        ("libghc-snap-server-dev", "libghc-snap-core-dev"),
    ),
    haskell(
        "snap+log",
        "snap",
        "Snap, +RTS -N1, access log on",
        ("snap-server", "snap-core"),
        ("libghc-snap-server-dev", "libghc-snap-core-dev"),
        access_log=True,
    ),
    haskell(
        "happstack",
        "happstack",
        "Happstack, +RTS -N1, TCP_NODELAY set on its socket, access log off; bigtable with blaze-html",
        ("happstack-server",),
        ("libghc-happstack-server-dev", "libghc-network-dev"),
    ),
    yaws(),
    jetty(),
]

