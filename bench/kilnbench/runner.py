"""The run: build every server, then rep by rep start each one, probe, warm up, drive, stop.

Servers alternate across repetitions (each rep starts from a different server)
so that drift on a shared machine hits all of them alike. Everything is
bounded: builds, start-up, every load run and every shutdown have a time limit.
"""

from __future__ import annotations

import csv
import http.client
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import load, procfs
from .install import Missing, ensure_tool
from .servers import Options, Paths, Server, Step, Unsupported, sqlite_path
from .workloads import Workload

SERVER_CPU = "0"
"""The CPU the server under test is pinned to; the load generator has CPU 1."""

BUILD_TIMEOUT_S = 1800
"""Longest one build step may take (a cold actix build on two busy cores takes minutes)."""

START_TIMEOUT_S = 60
"""Longest a server may take from exec to its first HTTP answer."""

STOP_TIMEOUT_S = 15
"""Time a server gets to exit after SIGTERM before it is killed."""

LOAD_TOOLS = {"taskset": "util-linux", "wrk": "wrk", "ab": "apache2-utils", "httperf": "httperf"}
"""Executables the runner drives, with the Debian package of each."""

ROW_FIELDS = [
    "server", "workload", "rep", "status", "tool", "conns", "requests", "duration_s", "rps",
    "lat_mean_ms", "lat_p50_ms", "lat_p99_ms", "lat_max_ms", "non2xx", "socket_errors", "timeouts",
    "errors", "failed", "rss_idle_kb", "rss_peak_kb", "cpu_s", "note",
]  # fmt: skip

READY_PATHS = ("/pong", "/hello", "/plaintext", "/")

CANNOT_BE_HAD = "cannot be had"
UNREACHABLE_SOURCE = "failed to resolve address for"
"""What cargo says when a dependency's host (a git repository) cannot be reached."""
"""The status of a server whose tools cannot be installed here (a `(build)` row)."""


@dataclass
class Plan:
    """Everything one run does."""

    servers: list[Server]
    workloads: list[Workload]
    settings: load.Settings
    reps: int
    out: Path
    paths: Paths
    options: Options
    build: bool = True
    pairs: frozenset[tuple[str, str]] | None = None
    """If set, only these (server, workload) pairs run (a report table runs each system only on its rows)."""


@dataclass
class Outcome:
    """What the run leaves for the report."""

    rows: list[dict] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)
    kiln_failures: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port: int, path: str, timeout_s: float = 10.0) -> tuple[int, dict[str, str], bytes]:
    """One GET on a fresh connection: (status, headers, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


class Process:
    """A started server: its own session (process group), pinned to the server CPU."""

    def __init__(self, server: Server, launch, port: int, log_path: Path):
        self.server = server
        self.launch = launch
        self.port = port
        self.log_path = log_path
        self.command = ["taskset", "-c", SERVER_CPU, *launch.argv]
        env = os.environ | launch.env
        with open(log_path, "ab") as log:
            self.popen = subprocess.Popen(
                self.command, env=env, cwd=launch.cwd, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip

    @property
    def pid(self) -> int:
        return self.popen.pid

    def log_tail(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1][:200] if lines else ""

    def wait_ready(self) -> str | None:
        """None once the server answers any HTTP request, else why it never did."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                return f"exited with status {self.popen.returncode}: {self.log_tail()}"
            for path in READY_PATHS:
                try:
                    http_get(self.port, path, timeout_s=2)
                    return None
                except (OSError, http.client.HTTPException):
                    break
            time.sleep(0.1)
        return f"no HTTP answer within {START_TIMEOUT_S}s"

    def stop(self) -> None:
        """SIGTERM to the server's process group, SIGKILL if it lingers, then delete its scratch files."""
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
                self.popen.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait()
            except ProcessLookupError:
                pass
        for path in self.launch.cleanup:
            path.unlink(missing_ok=True)


class Runner:
    def __init__(self, plan: Plan, log=print):
        self.plan = plan
        self.log = log
        self.outcome = Outcome()
        self.started = time.monotonic()
        (plan.out / "logs").mkdir(parents=True, exist_ok=True)
        (plan.out / "output").mkdir(parents=True, exist_ok=True)
        self._csv_file = open(plan.out / "raw.csv", "w", newline="")
        self._csv = csv.DictWriter(self._csv_file, fieldnames=ROW_FIELDS)
        self._csv.writeheader()
        self._built: dict[tuple[tuple[str, ...], str], str | None] = {}
        """Build steps already run in this run, each with its failure (None if it succeeded)."""

    # ------------------------------------------------------------ bookkeeping

    def progress(self, message: str) -> None:
        self.log(f"[{time.monotonic() - self.started:7.1f}s] {message}", flush=True)

    def command(self, argv: list[str], cwd: Path | None = None) -> None:
        where = f"(cd {cwd} && " if cwd else ""
        self.outcome.commands.append(f"{where}{' '.join(argv)}{')' if cwd else ''}")

    def row(self, server: Server, workload: str, rep: int, status: str, **values) -> dict:
        row = {f: "" for f in ROW_FIELDS} | {"server": server.name, "workload": workload, "rep": rep, "status": status}
        row |= {k: ("" if v is None else v) for k, v in values.items()}
        self.outcome.rows.append(row)
        self._csv.writerow(row)
        self._csv_file.flush()
        if server.name == "kiln" and status not in ("ok",):
            self.outcome.kiln_failures.append(f"{workload} rep {rep}: {status} {row['note']}".strip())
        return row

    # ------------------------------------------------------------ phases

    def run(self) -> Outcome:
        try:
            self._ensure_load_tools()
            ready = kiln_first_on_a_new_sqlite_file([s for s in self.plan.servers if self.build(s)], self.plan)
            for rep in range(1, self.plan.reps + 1):
                shift = (rep - 1) % max(len(ready), 1)
                for server in ready[shift:] + ready[:shift]:
                    self._run_server(server, rep)
        finally:
            self._csv_file.close()
        return self.outcome

    def _ensure_load_tools(self) -> None:
        for executable, package in LOAD_TOOLS.items():
            ensure_tool(executable, package, log=self.progress)
        if any(w.tool == "h2load" for w in self.plan.workloads):
            ensure_tool("h2load", "nghttp2-client", log=self.progress)

    def build(self, server: Server) -> bool:
        """Fetch its tools and run its build steps (each once per run); False, with a row saying
        why, if it cannot be built."""
        self.progress(f"build {server.name}")
        try:
            for executable, package in server.tools.items():
                ensure_tool(executable, package, log=self.progress)
        except Missing as e:
            self.row(server, "(build)", 0, CANNOT_BE_HAD, note=str(e))
            self.progress(f"build {server.name}: cannot be had: {e}")
            return False
        for step in server.build(self.plan.paths) if self.plan.build else []:
            key = (tuple(step.argv), str(step.cwd))
            if key not in self._built:  # kiln and kiln+log share one build
                self._built[key] = self._build_step(server, step)
            if self._built[key]:
                why = self._built[key]
                if UNREACHABLE_SOURCE in why:
                    # Not a fault of the peer's: only the package registries are reachable
                    # here, and its build fetches from elsewhere (a git dependency).
                    note = f"its build fetches from outside the package registries, unreachable here: {why}"
                    self.row(server, "(build)", 0, CANNOT_BE_HAD, note=note)
                    self.progress(f"build {server.name}: cannot be had: {note}")
                    return False
                self.row(server, "(build)", 0, "build failed", note=why)
                self.progress(f"build {server.name} FAILED: {why}")
                return False
        self.outcome.versions[server.name] = server.version(self.plan.paths)
        return True

    def _build_step(self, server: Server, step: Step) -> str | None:
        """Run one build step; None on success, else why it failed."""
        log_path = self.plan.out / "logs" / f"build-{server.name}.log"
        self.command(step.argv, step.cwd)
        with open(log_path, "ab") as log:
            try:
                done = subprocess.run(
                    step.argv, cwd=step.cwd, env=os.environ | step.env, stdout=log,
                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=BUILD_TIMEOUT_S, check=False,
                )  # fmt: skip
            except (OSError, subprocess.TimeoutExpired) as e:
                return f"{' '.join(step.argv[:3])}: {e}"
        if done.returncode == 0:
            return None
        tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or [""]
        return f"{' '.join(step.argv[:3])}: exit status {done.returncode}: {tail[0][:200]} (see logs/build-{server.name}.log)"

    def _run_server(self, server: Server, rep: int) -> None:
        reps = self.plan.reps
        port = free_port()
        try:
            launch = server.launch(self.plan.paths, port, self.plan.options)
        except Unsupported as e:
            if rep == 1:
                self.row(server, "(start)", rep, "unsupported", note=str(e))
                self.progress(f"rep {rep}/{reps} {server.name}: unsupported ({e})")
            return
        process = Process(server, launch, port, self.plan.out / "logs" / f"{server.name}-rep{rep}.log")
        self.command(process.command)
        self.progress(f"rep {rep}/{reps} start {server.name} on port {port}")
        try:
            failure = process.wait_ready()
            if failure:
                self.row(server, "(start)", rep, "start failed", note=failure)
                self.progress(f"rep {rep}/{reps} {server.name} did not start: {failure}")
                return
            self.row(server, "(idle)", rep, "ok", rss_idle_kb=procfs.rss_kb(process.pid))
            probed: dict[str, bool] = {}
            warmed = False
            for workload in fresh_server_first(self.plan.workloads):
                if not runs(server, workload) or (self.plan.pairs is not None and (server.name, workload.name) not in self.plan.pairs):
                    continue
                if not self._probe(process, workload, rep, probed):
                    continue
                if not warmed and workload.tool != "views":
                    self._warm_up(process, "/pong" if probed.get("/pong") else workload.path, 100, max(1, self.plan.settings.warmup_s))
                    warmed = True
                self._measure(process, workload, rep)
                if process.popen.poll() is not None:
                    self.row(server, "(crash)", rep, "crashed", note=f"exited during {workload.name}: {process.log_tail()}")
                    self.progress(f"rep {rep}/{reps} {server.name} CRASHED during {workload.name}")
                    return
        finally:
            process.stop()
            self.progress(f"rep {rep}/{reps} stopped {server.name}")

    def _probe(self, process: Process, workload: Workload, rep: int, probed: dict[str, bool]) -> bool:
        """Whether the server has the workload's endpoint right; a wrong answer gets a row."""
        if not workload.probe:
            return True
        if workload.path in probed:
            return probed[workload.path]
        server = process.server
        try:
            status, headers, body = http_get(process.port, workload.path)
        except (OSError, http.client.HTTPException) as e:
            status, headers, body = 0, {}, str(e).encode()
        problem = None
        if status == 404:
            probed[workload.path] = False
            return False
        if status != 200:
            problem = f"probe: HTTP {status} {body[:80]!r}"
        elif server.checks_body:
            problem = workload.check(body)
            missing = [h for h in ("server", "date", "content-type") if h not in headers]
            if "content-length" not in headers and headers.get("transfer-encoding") != "chunked":
                missing.append("content-length")
            if not problem and missing:
                self.progress(f"note: {server.name} {workload.path} lacks headers {', '.join(missing)}")
        probed[workload.path] = problem is None
        if problem:
            self.row(server, workload.name, rep, "nonconforming", note=problem)
            self.progress(f"rep {rep} {server.name} {workload.name}: nonconforming: {problem}")
        return problem is None

    def _warm_up(self, process: Process, path: str, conns: int, seconds: int) -> None:
        try:
            m = load.wrk(process.port, path, conns, seconds)
            self.command(m.command)
        except load.LoadError as e:
            self.progress(f"warm-up of {process.server.name} failed: {e}")

    def _measure(self, process: Process, workload: Workload, rep: int) -> None:
        s = self.plan.settings
        if s.warmup_s and workload.tool == "wsload":
            try:
                load.wsload(process.port, workload.path, workload.conns, workload.size, s.warmup_s, workload.deflate)
            except load.LoadError as e:
                self.progress(f"warm-up of {process.server.name} failed: {e}")
        elif s.warmup_s and workload.tool not in ("idle", "views", "ws-idle"):
            self._warm_up(process, workload.path, min(workload.conns, 100), s.warmup_s)
        pid = process.pid
        rss_idle = procfs.rss_kb(pid)
        cpu_before = procfs.cpu_seconds(pid)
        try:
            with procfs.RssSampler(pid) as sampler:
                m = self._drive(process.port, workload)
        except load.LoadError as e:
            self.command(e.command)
            self._save_output(process.server, workload, rep, e.output)
            self.row(process.server, workload.name, rep, "load failed", tool=workload.tool, note=str(e))
            self.progress(f"rep {rep} {process.server.name} {workload.name}: load failed: {e}")
            return
        rss_after = procfs.rss_kb(pid)
        self.command(m.command)
        self._save_output(process.server, workload, rep, m.output)
        r = m.result
        conns = s.idle_conns if workload.tool in ("idle", "ws-idle") else workload.conns
        note = f"RSS after {r.requests:,} requests: {rss_after} KiB" if workload.tool == "views" else None
        if r.reply_rate_avg is not None:
            note = f"httperf average reply rate {r.reply_rate_avg:,.1f}/s"
        self.row(
            process.server, workload.name, rep, "ok", tool=workload.tool, conns=conns,
            requests=r.requests, duration_s=r.duration_s, rps=_round(r.rps, 1),
            lat_mean_ms=_round(r.lat_mean_ms, 3), lat_p50_ms=_round(r.lat_p50_ms, 3),
            lat_p99_ms=_round(r.lat_p99_ms, 3), lat_max_ms=_round(r.lat_max_ms, 3),
            non2xx=r.non2xx, socket_errors=r.socket_errors, timeouts=r.timeouts, errors=r.errors, failed=r.failed,
            rss_idle_kb=rss_idle, rss_peak_kb=sampler.peak_kb,
            cpu_s=round(procfs.cpu_seconds(pid) - cpu_before, 2), note=note,
        )  # fmt: skip
        if workload.tool in ("idle", "ws-idle"):
            detail = f"{r.requests} idle connections held, RSS {rss_idle / 1024:.1f} -> {sampler.peak_kb / 1024:.1f} MiB"
        elif workload.tool == "views":
            detail = f"{r.requests:,} requests, RSS {rss_idle / 1024:.1f} -> {rss_after / 1024:.1f} MiB (peak {sampler.peak_kb / 1024:.1f})"
        else:
            p99 = f"{r.lat_p99_ms:.2f} ms" if r.lat_p99_ms is not None else "n/a"
            detail = f"{r.rps or 0:,.0f} req/s, p99 {p99}"
        self.progress(f"rep {rep}/{self.plan.reps} {process.server.name} {workload.name}: {detail}, {r.errors} errors")

    def _drive(self, port: int, workload: Workload) -> load.Measurement:
        s = self.plan.settings
        if workload.tool == "wrk":
            return load.wrk(port, workload.path, workload.conns, s.duration_s)
        if workload.tool == "wrk-pipeline":
            return load.wrk(port, workload.path, workload.conns, s.duration_s, s.pipeline_depth)
        if workload.tool == "ab":
            cap = max(s.ab_time_limit_s, workload.time_floor_s) if s.ab_time_limit_s else None
            return load.ab(port, workload.path, workload.conns, workload.requests or s.ab_requests, cap)
        if workload.tool == "httperf-burst":
            return load.httperf_burst(port, workload.path, s.duration_s)
        if workload.tool == "httperf":
            return load.httperf(port, workload.path, s)
        if workload.tool == "h2load":
            return load.h2load(port, workload.path, workload.conns, workload.streams, s.duration_s)
        if workload.tool == "idle":
            return load.idle(port, workload.path, s.idle_conns, while_held=lambda: None)
        if workload.tool == "ws-idle":
            return load.ws_idle(port, workload.path, s.idle_conns, while_held=lambda: None)
        if workload.tool == "wsload":
            return load.wsload(port, workload.path, workload.conns, workload.size, s.duration_s, workload.deflate)
        if workload.tool == "views":
            return load.ab(port, workload.path, workload.conns, workload.requests)
        raise ValueError(f"unknown tool {workload.tool}")

    def _save_output(self, server: Server, workload: Workload, rep: int, output: str) -> None:
        safe = server.name.replace("+", "-plus-")
        (self.plan.out / "output" / f"{safe}-{workload.name}-rep{rep}.txt").write_text(output)


def runs(server: Server, workload: Workload) -> bool:
    """Whether `server` runs `workload`: all of them, or those its `workloads` names, directly or
    through the workload's family (a report's tool on a contract endpoint)."""
    only = server.workloads
    return only is None or workload.name in only or (workload.family is not None and workload.family in only)


def kiln_first_on_a_new_sqlite_file(servers: list[Server], plan: Plan) -> list[Server]:
    """`servers`, kiln first when the run's SQLite file does not exist yet.

    kiln's migrations create the tables and refuse a file where someone else did, while
    an SQLite peer only fills in what is missing: so on a new file kiln must start first.
    """
    path = sqlite_path(plan.options.database_url, plan.paths.root)
    if path is None or (path.exists() and path.stat().st_size > 0):
        return servers
    return sorted(servers, key=lambda s: not s.name.startswith("kiln"))


def fresh_server_first(workloads: list[Workload]) -> list[Workload]:
    """`workloads`, those that measure a server as started (`views`: memory before and after
    a fixed number of requests) first, so that no other load has grown it; the rest in order."""
    return sorted(workloads, key=lambda w: w.tool != "views")


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)
