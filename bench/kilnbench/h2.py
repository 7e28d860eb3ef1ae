"""HTTP/2 side by side (issue 24): kiln, nginx, h2o and axum over h2c and over TLS.

    cd bench && python3 -m kilnbench.h2                                  # 3 reps x 10 s, everything
    cd bench && python3 -m kilnbench.h2 --reps 1 --duration 1 --warmup 0 --idle-conns 200   # a smoke run

| workload | load | servers |
|---|---|---|
| `pong-h2c-m10/-m100`, `static-h2c-m10/-m100` | `h2load -c100 -m10` (or `-m100`) `-D T`, prior knowledge | kiln, nginx-h2, h2o, axum-h2 |
| `pong-h2-m10/-m100`, `static-h2-m10/-m100` | the same over `https://` (ALPN h2, TLS 1.3) | the same |
| `wiki-h2` | `h2load -c10 -m10` on `https://.../pages/tour`: the demo site's long page | kiln, axum-wiki-gz-h2 |
| `idle-h2c`, `idle-h2` | N connections, one request each (`kilnbench.idleh2`), held idle: RSS delta / N | kiln, nginx-h2, h2o, axum-h2 |

nginx 1.22 on `listen ... http2` without ssl speaks only HTTP/2, so these servers are
probed with curl (`--http2-prior-knowledge`, or ALPN over TLS), which also checks the body
and that the answer came over HTTP/2. The certificate is the one `kilnbench.tls` makes.
Server CPU per request (µs, from /proc, over the counted run) is the verdict where one
h2load thread is the ceiling; rates and ratios go to `bench/results/<date>-h2/`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Callable

from . import load, procfs
from .idleh2 import hold_idle
from .install import Missing, ensure_tool
from .load import GRACE_S, LOAD_CPU
from .parse import ParseError, parse_h2load
from .runner import free_port
from .servers import Launch, Options, Paths, Server, Step, cargo_peer, debian_packages, kiln
from .sidecar import Results, argv_of, build, first_line, kiln_failed, median_of, raise_fd_limit, results_dir, start
from .tls import Tls, make_cert
from .workloads import BY_NAME as CONTRACT
from .workloads import WIKI_PAGE, Check

WIKI_DB = "bench/.build/h2/wiki.sqlite"
"""The SQLite file kiln and axum-wiki share for `wiki-h2` (from the checkout; kiln creates it)."""


@dataclass(frozen=True)
class H2Workload:
    """One HTTP/2 scenario."""

    name: str
    path: str
    tls: bool
    conns: int
    streams: int
    check: Check
    idle: bool = False
    wiki: bool = False


def _h2load_workloads() -> list[H2Workload]:
    found = []
    for tls in (False, True):
        for name, contract in (("pong", "pong"), ("static", "static")):
            for streams in (10, 100):
                w = CONTRACT[contract]
                found.append(H2Workload(f"{name}-{'h2' if tls else 'h2c'}-m{streams}", w.path, tls, 100, streams, w.check))
    return found


WORKLOADS: list[H2Workload] = [
    *_h2load_workloads(),
    H2Workload("wiki-h2", WIKI_PAGE, True, 10, 10, CONTRACT["wiki"].check, wiki=True),
    H2Workload("idle-h2c", "/pong", False, 0, 1, CONTRACT["pong"].check, idle=True),
    H2Workload("idle-h2", "/pong", True, 0, 1, CONTRACT["pong"].check, idle=True),
]
BY_NAME = {w.name: w for w in WORKLOADS}


@dataclass(frozen=True)
class H2Server:
    """A server of this run: how to build it, and to launch it plain (h2c) or over TLS."""

    server: Server
    launch: Callable[[Paths, int, "Tls | None"], Launch]
    wiki: str = "also"
    """Whether it runs the wiki workload: "also" (kiln), "only" (a wiki peer) or "no"."""

    def runs(self, w: H2Workload) -> bool:
        return self.wiki == "also" or (self.wiki == "only") == w.wiki


def _user_line(syntax: str) -> str:
    if os.geteuid() != 0:
        return ""
    return "user root;" if syntax == "nginx" else "user: root"


def nginx_h2() -> H2Server:
    def launch(paths: Paths, port: int, tls: Tls | None) -> Launch:
        home = paths.build / "nginx" / ("nginx-h2-tls" if tls else "nginx-h2")
        home.mkdir(parents=True, exist_ok=True)
        tls_lines = f"ssl_certificate {tls.cert}; ssl_certificate_key {tls.key}; ssl_protocols TLSv1.2 TLSv1.3;" if tls else ""
        conf = Template((paths.peers / "nginx" / "nginx-h2.conf.template").read_text()).substitute(
            prefix=home, port=port, static=paths.static, user=_user_line("nginx"),
            listen="ssl http2" if tls else "http2", tls=tls_lines,
        )  # fmt: skip
        (home / "nginx.conf").write_text(conf)
        return Launch(["nginx", "-p", str(home), "-e", str(home / "error.log"), "-c", str(home / "nginx.conf")])

    server = Server("nginx-h2", "nginx, 1 worker, http2 (h2c prior knowledge, or ssl http2)", lambda p: [], lambda *a: None,
                    lambda p: first_line(["nginx", "-v"]), tools={"nginx": "nginx"})  # fmt: skip
    return H2Server(server, launch, wiki="no")


def h2o() -> H2Server:
    def build_steps(paths: Paths) -> list[Step]:
        return [debian_packages(paths, "h2o")]

    def launch(paths: Paths, port: int, tls: Tls | None) -> Launch:
        home = paths.build / "h2o" / ("tls" if tls else "plain")
        home.mkdir(parents=True, exist_ok=True)
        (home / "pong.txt").write_text("PONG")
        tls_lines = f"  ssl:\n    certificate-file: {tls.cert}\n    key-file: {tls.key}\n" if tls else ""
        conf = Template((paths.peers / "h2o" / "h2o.conf.template").read_text()).substitute(
            prefix=home, port=port, static=paths.static, user=_user_line("h2o"), tls=tls_lines
        )
        (home / "h2o.conf").write_text(conf)
        return Launch(["h2o", "-m", "worker", "-c", str(home / "h2o.conf")])

    server = Server("h2o", "h2o (Debian), num-threads 1", build_steps, lambda *a: None,
                    lambda p: first_line(["h2o", "--version"]), tools={"h2o": "h2o"})  # fmt: skip
    return H2Server(server, launch, wiki="no")


def _cargo_variant(name: str, folder: str, binary: str, features: str, crates: tuple[str, ...], what: str, wiki: bool) -> H2Server:
    """A build of peers/<folder> with `features`, into .build/<name>; TLS through TLS_CERT/TLS_KEY."""
    server = cargo_peer(name, binary, crates, what, folder=folder, features=features)

    def launch(paths: Paths, port: int, tls: Tls | None) -> Launch:
        env = {"PORT": str(port), "STATIC_DIR": str(paths.static)}
        if wiki:
            env["DATABASE_URL"] = f"sqlite://{WIKI_DB}"
        if tls:
            env |= {"TLS_CERT": str(tls.cert), "TLS_KEY": str(tls.key)}
        return Launch([str(paths.build / name / "release" / binary)], env, cwd=paths.root)

    return H2Server(server, launch, "only" if wiki else "no")


def kiln_h2() -> H2Server:
    entry = kiln("kiln", access_log=False)

    def launch(paths: Paths, port: int, tls: Tls | None) -> Launch:
        plain = entry.launch(paths, port, Options(database_url=f"sqlite://{WIKI_DB}"))
        extra = ["--tls-cert", str(tls.cert), "--tls-key", str(tls.key)] if tls else []
        return Launch([*plain.argv, *extra], plain.env, plain.cwd, plain.cleanup)

    return H2Server(entry, launch)


def servers() -> list[H2Server]:
    return [
        kiln_h2(),
        nginx_h2(),
        h2o(),
        _cargo_variant("axum-h2", "axum", "peer-axum", "h2", ("axum", "hyper", "rustls"),
                       "axum 0.8 with http2 on a current-thread runtime; TLS: tokio-rustls + hyper-util auto", wiki=False),
        _cargo_variant("axum-wiki-gz-h2", "axum-wiki", "peer-axum-wiki", "compression,tls",
                       ("axum", "tokio-rusqlite", "pulldown-cmark", "tower-http"),
                       "axum-wiki with http2 and, over TLS, tokio-rustls + hyper-util auto; tower-http CompressionLayer", wiki=True),
    ]  # fmt: skip


def _url(port: int, path: str, tls: bool) -> str:
    return f"{'https' if tls else 'http'}://127.0.0.1:{port}{path}"


def curl_h2(port: int, path: str, tls: bool, check: Check) -> str | None:
    """One GET over HTTP/2 with curl: None if it came back 200 over HTTP/2 with a body that
    honours the contract, else what is wrong."""
    argv = ["curl", "-sk", "--max-time", "5", "-o", "-", "-w", "\n%{http_version} %{http_code}",
            "--http2" if tls else "--http2-prior-knowledge", _url(port, path, tls)]  # fmt: skip
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False)
    except subprocess.TimeoutExpired:
        return "curl timed out"
    body, _, trailer = done.stdout.rpartition(b"\n")
    if done.returncode != 0:
        return f"curl exit {done.returncode}"
    if trailer.strip() != b"2 200":
        return f"answered {trailer.decode(errors='replace')!r} (HTTP version, status), expected '2 200'"
    return check(body)


def h2load(port: int, w: H2Workload, seconds: int) -> load.Measurement:
    """h2load pinned to the load CPU; over TLS it offers ALPN h2 only."""
    argv = ["h2load", f"-c{w.conns}", f"-m{w.streams}", "-D", str(seconds), *(["--npn-list", "h2"] if w.tls else []),
            _url(port, w.path, w.tls)]  # fmt: skip
    command = ["taskset", "-c", LOAD_CPU, *argv]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + GRACE_S, check=False)
    output = done.stdout + done.stderr
    return load.Measurement(parse_h2load(output), command, output)


FIELDS = ["server", "workload", "rep", "status", "conns", "streams", "requests", "rps", "lat_mean_ms", "lat_max_ms",
          "errors", "cpu_s", "cpu_us_per_req", "idle_conns", "rss_before_kb", "rss_held_kb", "kb_per_conn", "command"]  # fmt: skip


def measure(entry: H2Server, w: H2Workload, port: int, pid: int, rep: int, args: argparse.Namespace, logs: Path) -> dict[str, object]:
    row: dict[str, object] = {"server": entry.server.name, "workload": w.name, "rep": rep, "status": "ok"}
    if w.idle:
        held = hold_idle(port, args.idle_conns, w.path, w.tls, lambda: procfs.rss_kb(pid))
        row.update(idle_conns=held.answered, rss_before_kb=held.rss_before_kb, rss_held_kb=held.rss_held_kb,
                   kb_per_conn=round((held.rss_held_kb - held.rss_before_kb) / max(held.answered, 1), 2),
                   errors=held.failed, command=f"kilnbench.idleh2 {args.idle_conns} {'tls' if w.tls else 'h2c'}")  # fmt: skip
        return row
    if args.warmup:
        h2load(port, w, args.warmup)
    cpu = procfs.cpu_seconds(pid)
    m = h2load(port, w, args.duration)
    cpu = procfs.cpu_seconds(pid) - cpu
    (logs / f"{entry.server.name}-{w.name}-{rep}.txt").write_text(" ".join(m.command) + "\n" + m.output)
    r = m.result
    requests = r.requests or 0
    row.update(conns=w.conns, streams=w.streams, requests=requests, rps=r.rps, lat_mean_ms=r.lat_mean_ms,
               lat_max_ms=r.lat_max_ms, errors=r.errors, cpu_s=round(cpu, 3),
               cpu_us_per_req=round(1e6 * cpu / max(requests, 1), 2), command=" ".join(m.command))  # fmt: skip
    return row


def summarise(rows: list[dict[str, object]], names: list[str]) -> str:
    """Medians per workload and server; `CPU other/kiln` > 1 means kiln spends less per request."""
    lines = ["| workload | server | req/s | server CPU µs/req | CPU other ÷ kiln | errors | KiB per idle conn |",
             "|---|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for w in WORKLOADS:
        kiln_cpu = median_of([r for r in rows if r["server"] == "kiln" and r["workload"] == w.name and r["status"] == "ok"], "cpu_us_per_req")
        for name in names:
            mine = [r for r in rows if r["server"] == name and r["workload"] == w.name]
            ok = [r for r in mine if r["status"] == "ok"]
            if not mine:
                continue
            if not ok:
                lines.append(f"| {w.name} | {name} | {mine[0]['status']} | | | | |")
                continue
            rps, cpu, kb = median_of(ok, "rps"), median_of(ok, "cpu_us_per_req"), median_of(ok, "kb_per_conn")
            ratio = f"{cpu / kiln_cpu:.2f}x" if cpu and kiln_cpu and name != "kiln" else ""
            errors = sum(int(r.get("errors") or 0) for r in ok)
            lines.append(f"| {w.name} | {name} | {f'{rps:,.0f}' if rps else ''} | {f'{cpu:.1f}' if cpu else ''} | {ratio} | "
                         f"{errors} | {f'{kb:.2f}' if kb is not None else ''} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m kilnbench.h2", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--duration", type=int, default=10, help="seconds per h2load run")
    parser.add_argument("--warmup", type=int, default=2, help="seconds of the same load before each counted run")
    parser.add_argument("--servers", default="kiln,nginx-h2,h2o,axum-h2,axum-wiki-gz-h2")
    parser.add_argument("--workloads", default=",".join(w.name for w in WORKLOADS))
    parser.add_argument("--idle-conns", type=int, default=10_000)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args(argv)
    p = Paths(Path(__file__).resolve().parents[2])
    out = results_dir(p, "h2", args.out)
    wanted = args.servers.split(",")
    workloads = [BY_NAME[n] for n in args.workloads.split(",") if n in BY_NAME]
    entries = [e for e in servers() if e.server.name in wanted]
    try:
        for tool, package in (("h2load", "nghttp2-client"), ("curl", "curl"), ("openssl", "openssl"), ("taskset", "util-linux")):
            ensure_tool(tool, package)
    except Missing as e:
        print(f"kilnbench.h2: {e}", file=sys.stderr)
        return 2
    raise_fd_limit(args.idle_conns + 1000)
    tls = make_cert(p)
    (p.root / WIKI_DB).parent.mkdir(parents=True, exist_ok=True)
    if not args.no_build:
        build(p, [s for e in entries for s in e.server.build(p)])
    results = Results("h2", FIELDS)
    logs = out / "logs"
    for rep in range(args.reps):
        order = entries[rep % len(entries):] + entries[: rep % len(entries)] if rep else entries  # kiln first: it makes the wiki file
        for entry in order:
            for over_tls in (False, True):
                # The idle workload first, on a server that no load has grown yet.
                mine = sorted((w for w in workloads if w.tls == over_tls and entry.runs(w)), key=lambda w: not w.idle)
                if not mine:
                    continue
                port = free_port()
                launch = entry.launch(p, port, tls if over_tls else None)
                started = start(entry.server, launch, port, logs / f"{entry.server.name}{'-tls' if over_tls else ''}.log",
                                lambda port, w=mine[0]: curl_h2(port, w.path, w.tls, w.check))  # fmt: skip
                try:
                    for w in mine:
                        row: dict[str, object] = {"server": entry.server.name, "workload": w.name, "rep": rep}
                        why = started.failure or curl_h2(port, w.path, w.tls, w.check)
                        if why:
                            results.add({**row, "status": why})
                            print(f"rep {rep} {entry.server.name:16} {w.name:16} {why}")
                            continue
                        try:
                            row = measure(entry, w, port, started.process.pid, rep, args, logs)
                        except (ParseError, subprocess.TimeoutExpired, OSError) as e:
                            row = {**row, "status": f"load failed: {e}"}
                        results.add(row)
                        print(f"rep {rep} {entry.server.name:16} {w.name:16} {row.get('rps') or ''} req/s "
                              f"{row.get('cpu_us_per_req') or ''} µs/req {row.get('kb_per_conn') or ''} KiB/conn "
                              f"errors {row.get('errors')} {row['status']}", flush=True)  # fmt: skip
                finally:
                    started.process.stop()
    summary = summarise(results.rows, [e.server.name for e in entries])
    versions = {e.server.name: e.server.version(p) for e in entries}
    results.write(out, summary, versions, argv_of(argv), notes=__doc__ or "")
    print(summary)
    return 1 if kiln_failed(results.rows, [e.server.name for e in entries]) else 0


if __name__ == "__main__":
    sys.exit(main())
