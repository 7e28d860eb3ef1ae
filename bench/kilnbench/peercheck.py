"""`bench/run --check-peers`: build and start each registered server and check its answers on
the endpoints it claims, one line per server: ok, FAILED and why, or cannot be had and why.

A server claims the workloads its `workloads` names, or else every contract endpoint it answers
(a 404 there is an endpoint it does not have); and every workload a report's row runs on it.
The answers are checked as a run's probes check them (workloads.py).
"""

from __future__ import annotations

import http.client
from dataclasses import dataclass, field
from pathlib import Path

from . import reportdata
from .load import Settings
from .runner import CANNOT_BE_HAD, Plan, Process, Runner, free_port, http_get, runs
from .servers import Options, Paths, Server, Unsupported
from .workloads import BY_NAME as WORKLOADS
from .workloads import WORKLOADS as ALL

CONTRACT = ("pong", "hello", "plaintext", "json", "static", "bigtable")
"""What a server without its own `workloads` set is probed on: the contract endpoints that need no database."""

OK, FAILED = "ok", "FAILED"


@dataclass
class Verdict:
    server: str
    status: str
    """OK, FAILED or CANNOT_BE_HAD."""
    detail: str
    checked: list[str] = field(default_factory=list)


def report_claims(reports: list[reportdata.Report]) -> dict[str, dict[str, str]]:
    """server -> {workload: "report NNN"} for every row that names the server."""
    claims: dict[str, dict[str, str]] = {}
    for rep in reports:
        for t in rep.tables:
            for row in t.rows:
                for name in row.peers:
                    claims.setdefault(name, {}).setdefault(row.workload, f"report {rep.id}")
    return claims


def claimed(server: Server, from_reports: dict[str, str]) -> list[tuple[str, bool]]:
    """(workload, required) pairs to probe: a report's or its own list's are required (a 404 fails);
    contract endpoints of a server without a list are not (a 404 means it does not have one)."""
    own = [w.name for w in ALL if server.workloads is not None and w.name in server.workloads and w.tool != "idle"]
    pairs = [(w, True) for w in own] + [(w, True) for w in from_reports if w in WORKLOADS and runs(server, WORKLOADS[w])]
    if server.workloads is None:
        pairs += [(w, False) for w in CONTRACT]
    seen: dict[str, bool] = {}
    for w, required in pairs:
        seen[w] = seen.get(w, False) or required
    return list(seen.items())


def probe(port: int, workload: str, checks_body: bool = True) -> str | None:
    """None if the endpoint answers as the contract says; "404" if it has none; else what is wrong.
    A server that answers every path alike (the floor: `checks_body` false) is held to the status."""
    w = WORKLOADS[workload]
    try:
        status, _headers, body = http_get(port, w.path)
    except (OSError, http.client.HTTPException) as e:
        return f"{w.path}: {e}"
    if status == 404:
        return "404"
    if status != 200:
        return f"{w.path}: HTTP {status} {body[:60]!r}"
    wrong = w.check(body) if checks_body else None
    return f"{w.path}: {wrong}" if wrong else None


def check(server: Server, runner: Runner, paths: Paths, options: Options, from_reports: dict[str, str], out: Path) -> Verdict:
    if not runner.build(server):
        last = next(r for r in reversed(runner.outcome.rows) if r["server"] == server.name)
        status = CANNOT_BE_HAD if last["status"] == CANNOT_BE_HAD else FAILED
        return Verdict(server.name, status, f"build: {last['note']}")
    port = free_port()
    try:
        launch = server.launch(paths, port, options)
    except Unsupported as e:
        return Verdict(server.name, CANNOT_BE_HAD, str(e))
    process = Process(server, launch, port, out / "logs" / f"{server.name.replace('+', '-plus-')}-check.log")
    try:
        failure = process.wait_ready()
        if failure:
            return Verdict(server.name, FAILED, f"start: {failure}")
        problems, answered = [], []
        for workload, required in claimed(server, from_reports):
            found = probe(port, workload, server.checks_body)
            if found is None:
                answered.append(WORKLOADS[workload].path)
            elif found != "404":
                problems.append(found)
            elif required:
                why = from_reports.get(workload, "its workloads list")
                problems.append(f"{WORKLOADS[workload].path}: 404 ({why} needs it)")
        if problems:
            return Verdict(server.name, FAILED, "; ".join(problems), answered)
        if not answered:
            return Verdict(server.name, FAILED, "answers none of the endpoints it claims")
        return Verdict(server.name, OK, " ".join(dict.fromkeys(answered)), answered)
    finally:
        process.stop()


def check_all(servers: list[Server], paths: Paths, options: Options, out: Path, build: bool, log=print) -> list[Verdict]:
    out.mkdir(parents=True, exist_ok=True)
    runner = Runner(Plan(servers, [], Settings(), 1, out, paths, options, build=build), log=lambda *a, **k: None)
    claims = report_claims(reportdata.load_all())
    verdicts = []
    for server in servers:
        verdict = check(server, runner, paths, options, claims.get(server.name, {}), out)
        log(f"{verdict.status:<14} {server.name}: {verdict.detail}", flush=True)
        verdicts.append(verdict)
    return verdicts
