"""The wiki page compressed (issue 25): kiln vs axum-wiki + tower-http CompressionLayer vs nginx.

    cd bench && python3 -m kilnbench.compress                               # 3 reps x 10 s
    cd bench && python3 -m kilnbench.compress --reps 1 --duration 1 --warmup 0   # a smoke run

| workload | load |
|---|---|
| `wiki-gzip` | `wrk -t1 -c100 -H 'Accept-Encoding: gzip'` on `/pages/tour` |
| `wiki-br` | the same with `Accept-Encoding: br` |

Servers, all at kiln's default levels (`Compression`'s `Levels`: gzip 4, brotli 4):
`kiln` (the demo site's pages go through its Compression layer; `/pages/tour` is
rendered and compressed per request), `kiln-saved` (the same kiln-demo serving the
saved copy nginx serves, as the static file `/static/tour.html` of a copy of its public
folder: compressed per request by the same Compression layer, nothing rendered: the
like-for-like row for nginx, weighing the compression and the server alone), `axum-wiki-gz-h2` (the axum-wiki peer built with
its `compression` feature: tower-http `CompressionLayer` with `CompressionLevel::Precise(4)`),
and `nginx-gzip` (a copy of kiln's page, saved once per run, served as a static file with
`gzip on; gzip_comp_level 4` and, where Debian's brotli filter module can be installed,
`brotli on; brotli_comp_level 4`: compressed per request too). Besides req/s and server CPU
per request, each row has the bytes on the wire of one response (head + body, read to the
end of a `Connection: close` request) and of its compressed body, so that "the same bytes
within 2 %" can be checked; every body is decompressed and checked as the wiki workload
checks the page.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from string import Template

from . import procfs
from .install import Missing, debian_installed, ensure_python_module, ensure_tool
from .load import GRACE_S, LOAD_CPU, WRK_TIMEOUT
from .parse import ParseError, parse_wrk
from .runner import free_port, http_get
from .servers import Launch, Options, Paths, Server, Step, cargo_peer, debian_packages, kiln
from .sidecar import Results, answers_200, argv_of, build, first_line, kiln_failed, median_of, results_dir, start
from .workloads import BY_NAME as CONTRACT
from .workloads import WIKI_PAGE

WIKI_DB = "bench/.build/compress/wiki.sqlite"
"""The SQLite file kiln and axum-wiki share (from the checkout; kiln creates and seeds it)."""
ENCODINGS = {"wiki-gzip": "gzip", "wiki-br": "br"}
SAVED_PAGE = "/static/tour.html"
"""Where kiln-saved serves the saved copy of the page."""
BROTLI_MODULE = Path("/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so")


def split_response(raw: bytes) -> tuple[dict[str, str], bytes]:
    """A whole HTTP/1.1 response as read to EOF: (lower-cased headers, body with any chunked
    framing removed)."""
    head, _, rest = raw.partition(b"\r\n\r\n")
    headers: dict[str, str] = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower().decode()] = value.strip().decode()
    if headers.get("transfer-encoding", "").lower() != "chunked":
        return headers, rest
    body = b""
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        body, rest = body + rest[:size], rest[size + 2 :]
    return headers, body


def decode(body: bytes, encoding: str) -> bytes:
    """The body decompressed; brotli needs the `brotli` module (pip-installed when missing)."""
    if encoding == "gzip":
        return gzip.decompress(body)
    import brotli  # type: ignore[import-not-found]

    return brotli.decompress(body)


def page_path(server: str) -> str:
    """The path at which `server` answers the page."""
    return SAVED_PAGE if server == "kiln-saved" else WIKI_PAGE


def one_response(port: int, encoding: str, path: str = WIKI_PAGE) -> tuple[int, int, str | None]:
    """(bytes on the wire, compressed body bytes, what is wrong or None) of one GET of the page
    at `path` with `Accept-Encoding: encoding`, read to the end of a `Connection: close` exchange."""
    request = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept-Encoding: {encoding}\r\n"
               "Connection: close\r\n\r\n").encode()  # fmt: skip
    raw = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        while chunk := s.recv(65536):
            raw += chunk
    headers, body = split_response(raw)
    if not raw.startswith(b"HTTP/1.1 200"):
        return len(raw), len(body), f"status line {raw[:40]!r}"
    if headers.get("content-encoding") != encoding:
        return len(raw), len(body), f"Content-Encoding {headers.get('content-encoding')!r}, expected {encoding}"
    try:
        why = CONTRACT["wiki"].check(decode(body, encoding))
    except (OSError, ValueError, ImportError) as e:
        why = f"cannot decode {encoding}: {e}"
    return len(raw), len(body), why


def kiln_entry() -> tuple[Server, object]:
    entry = kiln("kiln", access_log=False)
    return entry, lambda paths, port: entry.launch(paths, port, Options(database_url=f"sqlite://{WIKI_DB}"))


def kiln_saved_entry(page: Path) -> tuple[Server, object]:
    """kiln-demo with `KILN_PUBLIC` a copy of app/public (the site's stylesheet must be
    there) plus the saved page, served at SAVED_PAGE."""
    entry = kiln("kiln-saved", access_log=False)

    def launch(paths: Paths, port: int) -> Launch:
        public = paths.build / "compress" / "public"
        if public.exists():
            shutil.rmtree(public)
        shutil.copytree(paths.root / "app" / "public", public)
        if page.exists():  # else the probe of SAVED_PAGE fails and the row says so
            shutil.copyfile(page, public / Path(SAVED_PAGE).name)
        started = entry.launch(paths, port, Options(database_url=f"sqlite://{WIKI_DB}"))
        return replace(started, env={**started.env, "KILN_PUBLIC": str(public)})

    return entry, launch


def axum_entry() -> tuple[Server, object]:
    server = cargo_peer("axum-wiki-gz-h2", "peer-axum-wiki", ("axum", "tower-http"),
                        "axum-wiki + tower-http CompressionLayer, CompressionLevel::Precise(4)",
                        folder="axum-wiki", features="compression,tls")  # fmt: skip
    return server, lambda paths, port: server.launch(paths, port, Options(database_url=f"sqlite://{WIKI_DB}"))


def nginx_entry(page: Path) -> tuple[Server, object]:
    def launch(paths: Paths, port: int) -> Launch:
        home = paths.build / "nginx" / "nginx-gzip"
        home.mkdir(parents=True, exist_ok=True)
        brotli = BROTLI_MODULE.exists()
        conf = Template((paths.peers / "nginx" / "nginx-gzip.conf.template").read_text()).substitute(
            prefix=home, port=port, page=page, user="user root;" if os.geteuid() == 0 else "",
            brotli_module=f"load_module {BROTLI_MODULE};" if brotli else "",
            brotli="brotli on; brotli_comp_level 4; brotli_types text/html;" if brotli else "",
        )  # fmt: skip
        (home / "nginx.conf").write_text(conf)
        return Launch(["nginx", "-p", str(home), "-e", str(home / "error.log"), "-c", str(home / "nginx.conf")])

    def steps(paths: Paths) -> list[Step]:
        return [debian_packages(paths, "libnginx-mod-http-brotli-filter")]

    def version(paths: Paths) -> str:
        brotli = debian_installed("libnginx-mod-http-brotli-filter")
        return first_line(["nginx", "-v"]) + (" + brotli filter module" if brotli else " (no brotli module)")

    return Server("nginx-gzip", "nginx static copy of the page, gzip_comp_level 4, brotli_comp_level 4", steps,
                  lambda *a: None, version), launch  # fmt: skip


def wrk(port: int, encoding: str, seconds: int, path: str = WIKI_PAGE) -> tuple[list[str], str]:
    argv = ["taskset", "-c", LOAD_CPU, "wrk", "-t1", "-c100", f"-d{seconds}s", "--timeout", WRK_TIMEOUT, "--latency",
            "-H", f"Accept-Encoding: {encoding}", f"http://127.0.0.1:{port}{path}"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + GRACE_S, check=False)
    return argv, done.stdout + done.stderr


FIELDS = ["server", "workload", "rep", "status", "requests", "rps", "lat_p50_ms", "lat_p99_ms", "errors", "cpu_s",
          "cpu_us_per_req", "wire_bytes", "body_bytes", "command"]  # fmt: skip


def summarise(rows: list[dict[str, object]], names: list[str]) -> str:
    """Medians per workload and server, with kiln's ratios: CPU per request other ÷ kiln
    (above 1: kiln spends less), other ÷ kiln-saved (the like-for-like figure for nginx,
    which serves the saved copy too), and body bytes ÷ kiln's."""
    lines = ["| workload | server | req/s | p99 ms | server CPU µs/req | CPU other ÷ kiln | CPU other ÷ kiln-saved | bytes on the wire | body bytes | body ÷ kiln's | errors |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for workload in ENCODINGS:
        base = [r for r in rows if r["server"] == "kiln" and r["workload"] == workload and r["status"] == "ok"]
        kiln_cpu, kiln_body = median_of(base, "cpu_us_per_req"), median_of(base, "body_bytes")
        saved = [r for r in rows if r["server"] == "kiln-saved" and r["workload"] == workload and r["status"] == "ok"]
        saved_cpu = median_of(saved, "cpu_us_per_req")
        for name in names:
            mine = [r for r in rows if r["server"] == name and r["workload"] == workload]
            ok = [r for r in mine if r["status"] == "ok"]
            if mine and not ok:
                lines.append(f"| {workload} | {name} | {mine[0]['status']} | | | | | | | | |")
            if not ok:
                continue
            rps, p99, cpu = median_of(ok, "rps"), median_of(ok, "lat_p99_ms"), median_of(ok, "cpu_us_per_req")
            wire, body = median_of(ok, "wire_bytes"), median_of(ok, "body_bytes")
            cpu_ratio = f"{cpu / kiln_cpu:.2f}x" if cpu and kiln_cpu and name != "kiln" else ""
            saved_ratio = f"{cpu / saved_cpu:.2f}x" if cpu and saved_cpu and name not in ("kiln", "kiln-saved") else ""
            body_ratio = f"{body / kiln_body:.3f}" if body and kiln_body and name != "kiln" else ""
            errors = sum(int(r.get("errors") or 0) for r in ok)
            lines.append(f"| {workload} | {name} | {rps or 0:,.0f} | {p99 or 0:.2f} | {cpu or 0:.1f} | {cpu_ratio} | {saved_ratio} | "
                         f"{wire or 0:,.0f} | {body or 0:,.0f} | {body_ratio} | {errors} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m kilnbench.compress", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--servers", default="kiln,kiln-saved,axum-wiki-gz-h2,nginx-gzip")
    parser.add_argument("--workloads", default=",".join(ENCODINGS))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args(argv)
    p = Paths(Path(__file__).resolve().parents[2])
    out = results_dir(p, "compress", args.out)
    workloads = [w for w in args.workloads.split(",") if w in ENCODINGS]
    try:
        ensure_tool("wrk", "wrk")
        ensure_tool("nginx", "nginx")
    except Missing as e:
        print(f"kilnbench.compress: {e}", file=sys.stderr)
        return 2
    if "wiki-br" in workloads and not ensure_python_module("brotli", "brotli"):
        print("kilnbench.compress: the brotli Python module cannot be had; br bodies are not checked", file=sys.stderr)
    (p.root / WIKI_DB).parent.mkdir(parents=True, exist_ok=True)
    page = p.build / "compress" / "tour.html"
    wanted = args.servers.split(",")
    entries = [e for e in (kiln_entry(), kiln_saved_entry(page), axum_entry(), nginx_entry(page)) if e[0].name in wanted]
    if not args.no_build:
        steps, seen = [], set()
        for server, _ in entries:  # kiln and kiln-saved are one binary: built once
            for step in server.build(p):
                if (key := (tuple(step.argv), step.cwd)) not in seen:
                    seen.add(key)
                    steps.append(step)
        build(p, steps)
    results = Results("compress", FIELDS)
    logs = out / "logs"
    for rep in range(args.reps):
        order = entries[rep % len(entries):] + entries[: rep % len(entries)] if rep else entries  # kiln first: the page copy
        for server, launch in order:
            port = free_port()
            path = page_path(server.name)
            started = start(server, launch(p, port), port, logs / f"{server.name}.log", answers_200(path))
            try:
                if server.name == "kiln" and not started.failure and not page.exists():
                    page.write_bytes(http_get(port, WIKI_PAGE)[2])
                for workload in workloads:
                    encoding = ENCODINGS[workload]
                    row: dict[str, object] = {"server": server.name, "workload": workload, "rep": rep, "status": "ok"}
                    why = started.failure
                    wire = body = 0
                    if not why:
                        wire, body, why = one_response(port, encoding, path)
                    if why:
                        results.add({**row, "status": why})
                        print(f"rep {rep} {server.name:16} {workload:10} {why}")
                        continue
                    try:
                        if args.warmup:
                            wrk(port, encoding, args.warmup, path)
                        cpu = procfs.cpu_seconds(started.process.pid)
                        command, output = wrk(port, encoding, args.duration, path)
                        cpu = procfs.cpu_seconds(started.process.pid) - cpu
                        r = parse_wrk(output)
                    except (ParseError, subprocess.TimeoutExpired, OSError) as e:
                        results.add({**row, "status": f"load failed: {e}"})
                        continue
                    (logs / f"{server.name}-{workload}-{rep}.txt").write_text(" ".join(command) + "\n" + output)
                    requests = r.requests or 0
                    row.update(requests=requests, rps=r.rps, lat_p50_ms=r.lat_p50_ms, lat_p99_ms=r.lat_p99_ms,
                               errors=r.errors, cpu_s=round(cpu, 3), cpu_us_per_req=round(1e6 * cpu / max(requests, 1), 2),
                               wire_bytes=wire, body_bytes=body, command=" ".join(command))  # fmt: skip
                    results.add(row)
                    print(f"rep {rep} {server.name:16} {workload:10} {r.rps or 0:>9,.0f} req/s {row['cpu_us_per_req']} µs/req "
                          f"{wire} B on the wire, body {body} B, errors {r.errors}", flush=True)  # fmt: skip
            finally:
                started.process.stop()
    names = [server.name for server, _ in entries]
    summary = summarise(results.rows, names)
    results.write(out, summary, {s.name: s.version(p) for s, _ in entries}, argv_of(argv), notes=__doc__ or "")
    print(summary)
    return 1 if kiln_failed(results.rows, names) else 0


if __name__ == "__main__":
    sys.exit(main())
