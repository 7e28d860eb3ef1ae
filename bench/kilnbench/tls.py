"""HTTPS workloads (issue 14): kiln, nginx (OpenSSL) and actix-web (rustls) with the same certificate.

    cd bench && python3 -m kilnbench.tls                          # 3 reps x 10 s, every server and workload
    cd bench && python3 -m kilnbench.tls --reps 1 --duration 2    # a smoke run, not a measurement

| workload | load | what decides |
|---|---|---|
| `pong-tls` | `wrk -t1 -c100` on `https://.../pong`, keep-alive (TLS 1.3) | server CPU per request |
| `handshake-full` | `tls-handshakes`: new TLS 1.3 connection per `GET /pong` with `Connection: close`, resumption off | connections/s, server CPU per connection |
| `handshake-resume` | the same, each client thread resuming its last session (ticket) | the same |

Each server is pinned to CPU 0 with one worker and the load to CPU 1, as in the main run
(`kilnbench.runner`), and the servers alternate per repetition. The certificate (ECDSA
P-256, self-signed for localhost) is made with the openssl CLI under `bench/.build/tls/`;
`tls-handshakes` (bench/tls-handshakes, a bounded Rust client on rustls) is built there too,
because wrk cannot turn session resumption on and off. Results go to
`bench/results/<date>-tls/`: raw.csv, summary.md (medians, ratios to nginx), README.md.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from string import Template

from . import procfs
from .install import Missing, ensure_tool
from .load import GRACE_S, LOAD_CPU, WRK_TIMEOUT
from .parse import ParseError, json_report, parse_wrk
from .runner import Process, free_port
from .servers import Launch, Options, Paths, Server, Step, cargo_peer, kiln

WORKLOADS = ("pong-tls", "handshake-full", "handshake-resume")
HANDSHAKE_THREADS = 8
"""Client threads of tls-handshakes: enough to keep one server core busy through connect latency."""
READY_TIMEOUT_S = 60
BUILD_TIMEOUT_S = 1800


def parse_handshakes(text: str) -> dict[str, float]:
    """tls-handshakes' one JSON line: connections, errors, resumed, seconds."""
    return json_report(text, "tls-handshakes", {"connections", "errors", "resumed", "seconds"})


@dataclass(frozen=True)
class Tls:
    """The certificate every server presents."""

    cert: Path
    key: Path


def make_cert(paths: Paths) -> Tls:
    home = paths.build / "tls"
    home.mkdir(parents=True, exist_ok=True)
    tls = Tls(home / "cert.pem", home / "key.pem")
    if not (tls.cert.exists() and tls.key.exists()):
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-days", "30", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
             "-keyout", str(tls.key), "-out", str(tls.cert)],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
    return tls


def _handshakes_binary(paths: Paths) -> Path:
    return paths.build / "tls-handshakes" / "release" / "tls-handshakes"


def servers(tls: Tls) -> list[tuple[Server, object]]:
    """(entry, how to launch it over TLS) for kiln, nginx and actix-tls."""
    kiln_entry = kiln("kiln", access_log=False)

    def kiln_launch(paths: Paths, port: int) -> Launch:
        plain = kiln_entry.launch(paths, port, Options())
        return Launch([*plain.argv, "--tls-cert", str(tls.cert), "--tls-key", str(tls.key)], plain.env, plain.cwd, plain.cleanup)

    def nginx_launch(paths: Paths, port: int) -> Launch:
        home = paths.build / "nginx" / "nginx-tls"
        home.mkdir(parents=True, exist_ok=True)
        conf = Template((paths.peers / "nginx" / "nginx-tls.conf.template").read_text()).substitute(
            prefix=home, port=port, cert=tls.cert, key=tls.key, user="user root;" if os.geteuid() == 0 else ""
        )
        (home / "nginx.conf").write_text(conf)
        return Launch(["nginx", "-p", str(home), "-e", str(home / "error.log"), "-c", str(home / "nginx.conf")])

    actix = cargo_peer("actix-tls", "peer-actix-tls", ("actix-web", "rustls"), "actix-web 4 + rustls 0.23 (ring), 1 worker")

    def actix_launch(paths: Paths, port: int) -> Launch:
        plain = actix.launch(paths, port, Options())
        return Launch(plain.argv, {**plain.env, "TLS_CERT": str(tls.cert), "TLS_KEY": str(tls.key)}, plain.cwd)

    nginx = Server("nginx-tls", "nginx (OpenSSL), 1 worker, tickets and session cache on", lambda p: [], lambda *a: None,
                   lambda p: subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip(),
                   tools={"nginx": "nginx"})  # fmt: skip
    return [(kiln_entry, kiln_launch), (nginx, nginx_launch), (actix, actix_launch)]


def wait_ready(process: Process, port: int) -> str | None:
    """None once `GET /pong` over TLS answers 200, else why not."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.popen.poll() is not None:
            return f"exited with status {process.popen.returncode}: {process.log_tail()}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as raw:
                with context.wrap_socket(raw, server_hostname="localhost") as s:
                    s.sendall(b"GET /pong HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                    if s.recv(64).startswith(b"HTTP/1.1 200"):
                        return None
        except OSError:
            pass
        time.sleep(0.1)
    return f"no HTTPS answer within {READY_TIMEOUT_S}s"


def drive(paths: Paths, workload: str, port: int, seconds: int) -> tuple[dict[str, float], list[str], str]:
    """Runs one workload pinned to the load CPU: (figures, command, raw output)."""
    if workload == "pong-tls":
        argv = ["wrk", "-t1", "-c100", f"-d{seconds}s", "--timeout", WRK_TIMEOUT, "--latency", f"https://127.0.0.1:{port}/pong"]
    else:
        mode = "full" if workload == "handshake-full" else "resume"
        argv = [str(_handshakes_binary(paths)), str(port), str(seconds), str(HANDSHAKE_THREADS), mode, "tls13"]
    command = ["taskset", "-c", LOAD_CPU, *argv]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + GRACE_S, check=False)
    output = done.stdout + done.stderr
    if workload == "pong-tls":
        r = parse_wrk(output)
        figures = {"count": r.requests or 0, "rate": r.rps or 0.0, "errors": r.errors, "resumed": 0, "p99_ms": r.lat_p99_ms or 0.0}
    else:
        h = parse_handshakes(output)
        figures = {"count": h["connections"], "rate": h["connections"] / max(h["seconds"], 1e-9),
                   "errors": h["errors"], "resumed": h["resumed"], "p99_ms": 0.0}  # fmt: skip
    return figures, command, output


def build(paths: Paths, entries: list[tuple[Server, object]], log) -> None:
    steps = [step for server, _ in entries for step in server.build(paths)]
    manifest = paths.bench / "tls-handshakes" / "Cargo.toml"
    target = paths.build / "tls-handshakes"
    steps.append(Step(["cargo", "build", "--release", "--manifest-path", str(manifest), "--target-dir", str(target)], paths.root))
    for step in steps:
        log(f"$ {' '.join(step.argv)}")
        subprocess.run(step.argv, cwd=step.cwd, env=os.environ | step.env, check=True, timeout=BUILD_TIMEOUT_S)


def summarise(rows: list[dict]) -> str:
    """Medians per server and workload, with kiln's ratios to nginx: CPU per request or connection
    (nginx / kiln, higher is better for kiln) and rate (kiln / nginx)."""
    medians: dict[tuple[str, str], dict[str, float]] = {}
    for key in {(r["server"], r["workload"]) for r in rows if r["status"] == "ok"}:
        mine = [r for r in rows if (r["server"], r["workload"]) == key and r["status"] == "ok"]
        medians[key] = {f: statistics.median(float(r[f]) for r in mine) for f in ("rate", "cpu_us_per_op", "errors", "resumed_pct")}
    lines = ["| workload | server | rate (/s) | server CPU µs per op | errors | resumed % | CPU ratio nginx/kiln | rate ratio kiln/nginx |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for workload in WORKLOADS:
        base = medians.get(("nginx-tls", workload))
        for server in ("kiln", "nginx-tls", "actix-tls"):
            m = medians.get((server, workload))
            if m is None:
                continue
            cpu_ratio = rate_ratio = ""
            if server == "kiln" and base and m["cpu_us_per_op"] and m["rate"] and base["rate"]:
                cpu_ratio = f"{base['cpu_us_per_op'] / m['cpu_us_per_op']:.2f}x"
                rate_ratio = f"{m['rate'] / base['rate']:.2f}x"
            lines.append(f"| {workload} | {server} | {m['rate']:,.0f} | {m['cpu_us_per_op']:.1f} | {m['errors']:.0f} | "
                         f"{m['resumed_pct']:.0f} | {cpu_ratio} | {rate_ratio} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m kilnbench.tls", description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--duration", type=int, default=10, help="seconds per workload run")
    parser.add_argument("--warmup", type=int, default=2, help="seconds of the same load before each measured run")
    parser.add_argument("--servers", default="kiln,nginx-tls,actix-tls")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args(argv)
    paths = Paths(Path(__file__).resolve().parents[2])
    out = args.out or paths.bench / "results" / f"{date.today().isoformat()}-tls"
    out.mkdir(parents=True, exist_ok=True)
    wanted = args.servers.split(",")
    workloads = [w for w in args.workloads.split(",") if w in WORKLOADS]
    try:
        ensure_tool("wrk", "wrk")
        ensure_tool("openssl", "openssl")
        if "nginx-tls" in wanted:
            ensure_tool("nginx", "nginx")
    except Missing as e:
        print(f"kilnbench.tls: {e}", file=sys.stderr)
        return 2
    tls = make_cert(paths)
    entries = [(s, launch) for s, launch in servers(tls) if s.name in wanted]
    if not args.no_build:
        build(paths, entries, print)
    rows: list[dict] = []
    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    for rep in range(args.reps):
        for server, launch in entries[rep % len(entries):] + entries[: rep % len(entries)]:
            port = free_port()
            process = Process(server, launch(paths, port), port, logs / f"{server.name}.log")
            try:
                why = wait_ready(process, port)
                for workload in workloads:
                    row = {"server": server.name, "workload": workload, "rep": rep, "status": "ok"}
                    if why:
                        rows.append({**row, "status": why})
                        continue
                    try:
                        if args.warmup:
                            drive(paths, workload, port, args.warmup)
                        before = procfs.cpu_seconds(process.pid)
                        figures, command, output = drive(paths, workload, port, args.duration)
                        cpu = procfs.cpu_seconds(process.pid) - before
                    except (ParseError, subprocess.TimeoutExpired, OSError) as e:
                        rows.append({**row, "status": f"load failed: {e}"})
                        continue
                    (logs / f"{server.name}-{workload}-{rep}.txt").write_text(" ".join(command) + "\n" + output)
                    count = figures["count"] or 1
                    row.update(count=figures["count"], rate=round(figures["rate"], 1), errors=figures["errors"],
                               resumed_pct=round(100 * figures["resumed"] / count, 1), server_cpu_s=round(cpu, 3),
                               cpu_us_per_op=round(1e6 * cpu / count, 2), p99_ms=figures["p99_ms"],
                               command=" ".join(command))  # fmt: skip
                    rows.append(row)
                    print(f"rep {rep} {server.name:10} {workload:17} {row['rate']:>10,.0f}/s "
                          f"{row['cpu_us_per_op']:>8.1f} µs CPU/op  errors {row['errors']}  resumed {row['resumed_pct']}%")  # fmt: skip
            finally:
                process.stop()
    fields = ["server", "workload", "rep", "status", "count", "rate", "errors", "resumed_pct", "server_cpu_s",
              "cpu_us_per_op", "p99_ms", "command"]  # fmt: skip
    with open(out / "raw.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    summary = summarise(rows)
    (out / "summary.md").write_text(summary)
    versions = "\n".join(f"- {s.name}: {s.version(paths)}" for s, _ in entries)
    machine = f"{os.cpu_count()} CPUs, {shutil.which('wrk')}, {subprocess.run(['uname', '-r'], capture_output=True, text=True).stdout.strip()}"
    command = "python3 -m kilnbench.tls " + " ".join(sys.argv[1:] if argv is None else argv)
    (out / "README.md").write_text(
        f"# HTTPS run {date.today().isoformat()}\n\n`cd bench && {command}`\n\nMachine: {machine}\n\n"
        f"Servers:\n{versions}\n\n{summary}"
    )
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
