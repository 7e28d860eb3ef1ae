"""`bench/run --report-table NNN|all`: run a report's workloads with its tool on the report's
systems that are registered, and kiln, and write its table as the report laid it out.

Each report runs in its own sub-folder of the result folder (`NNN/raw.csv`, `NNN/output/`,
`NNN/logs/`); `report-NNN.md` and `report-NNN-<table>.png` sit at the top with a README that
names the machine, the versions and every command.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import report, reportdata, reporttable
from .load import Settings
from .registry import BY_NAME as SERVERS
from .registry import UNAVAILABLE
from .runner import Outcome, Plan, Runner
from .servers import Options, Paths, is_postgres
from .workloads import BY_NAME as WORKLOADS

NEEDS_POSTGRES = {"004"}
"""Reports whose workloads need `--database postgres://...` (the mix table)."""

STARTUP_S = 5
"""A rough allowance per server start and stop, for the estimate of a run's length."""


@dataclass
class Ran:
    report: reportdata.Report
    outcome: Outcome | None
    skipped: str = ""


def _chosen(row: reportdata.Row) -> str | None:
    """The server that reproduces a row: the first of its `peers` that is registered."""
    return next((p for p in row.peers if p in SERVERS), None)


def servers_for(rep: reportdata.Report) -> tuple[list, list[str]]:
    """The registered servers that reproduce a report's rows (kiln variants first), and the rows'
    names of which none is registered."""
    rows = [r for t in rep.tables for r in t.rows]
    kilns = list(dict.fromkeys(r.kiln for r in rows))
    chosen = list(dict.fromkeys(n for n in map(_chosen, rows) if n is not None))
    missing = list(dict.fromkeys(" or ".join(r.peers) for r in rows if r.peers and _chosen(r) is None))
    return [SERVERS[n] for n in kilns + chosen if n in SERVERS], missing


def pairs_for(rep: reportdata.Report) -> set[tuple[str, str]]:
    """The (server, workload) pairs a report's rows need: each row's system and its kiln variant."""
    rows = [r for t in rep.tables for r in t.rows]
    return {(n, r.workload) for r in rows for n in (r.kiln, _chosen(r)) if n in SERVERS}


def estimate_s(reports: list[reportdata.Report], settings: Settings, reps: int) -> float:
    """Seconds a run should take once everything is built: every (server, workload) pair the
    rows name, each with its warm-up and its load (ab and httperf are capped at the duration)."""
    total = 0.0
    for rep in reports:
        servers, _ = servers_for(rep)
        load_s = sum(settings.warmup_s + max(settings.duration_s, WORKLOADS[w].time_floor_s) for _, w in pairs_for(rep))
        total += reps * (load_s + len(servers) * STARTUP_S)
    return total


def settings_lines(settings: Settings, reps: int) -> list[str]:
    return [
        f"- repetitions: {reps}, servers alternating; each figure here is the median over them",
        "- server pinned to CPU 0 with one worker/process (or the report's process count, said in its row); "
        "load generator pinned to CPU 1",
        f"- ab: `-r -k -n {settings.ab_requests}` (or the report's -n) and the report's -c, stopped after "
        f"{settings.ab_time_limit_s} s (`-t`) if not done",
        f"- httperf: the Snap report's command, stopped with SIGINT after {settings.duration_s} s",
        f"- wrk: `-t1`, {settings.duration_s} s; {settings.warmup_s} s of wrk warm-up before each workload",
    ]


def run(
    ids: list[str], settings: Settings, reps: int, out: Path, paths: Paths, database: str | None, build: bool,
    only: set[str] | None = None, log=print,
) -> list[Ran]:
    """Run each report in turn; `only`, if given, limits the servers to those names (a smoke run)."""
    reports = [reportdata.load(i) for i in ids]
    for module, why in UNAVAILABLE.items():
        log(f"bench/run: {module}: {why}", flush=True)
    log(f"bench/run: report tables {', '.join(ids)}: about {estimate_s(reports, settings, reps) / 60:.0f} min once built", flush=True)
    ran: list[Ran] = []
    for rep in reports:
        sub = out / rep.id
        sub.mkdir(parents=True, exist_ok=True)
        servers, missing = servers_for(rep)
        for name in missing:
            log(f"bench/run: report {rep.id}: {name} is not registered", flush=True)
        if only is not None:
            servers = [s for s in servers if s.name in only]
        if rep.id in NEEDS_POSTGRES and not is_postgres(database):
            why = "needs --database postgres://... (eval \"$(scripts/pg start)\" gives one)"
            log(f"bench/run: report {rep.id} skipped: {why}", flush=True)
            write_report(out, rep, [], settings, reps, skipped=why)
            ran.append(Ran(rep, None, why))
            continue
        workloads = [WORKLOADS[w] for w in rep.workloads]
        options = Options(database if rep.id in NEEDS_POSTGRES else None)
        pairs = frozenset(pairs_for(rep))
        log(f"bench/run: report {rep.id}: {len(servers)} servers, {len(pairs)} (server, workload) pairs × {reps} reps", flush=True)
        plan = Plan(servers, workloads, settings, reps, sub, paths, options, build=build, pairs=pairs)
        outcome = Runner(plan, log=log).run()
        write_report(out, rep, report.read_rows(sub / "raw.csv"), settings, reps)
        ran.append(Ran(rep, outcome))
    return ran


def write_report(out: Path, rep: reportdata.Report, raw: list[dict], settings: Settings, reps: int, skipped: str = "") -> None:
    lines = settings_lines(settings, reps) + ([f"- **not run**: {skipped}"] if skipped else [])
    text = reporttable.report_markdown(rep, set(SERVERS), raw, UNAVAILABLE, lines)
    (out / f"report-{rep.id}.md").write_text(text)


def rebuild(out: Path, ids: list[str], plots: bool) -> None:
    """`bench/run --report-table NNN --report DIR`: the tables and charts again from DIR/NNN/raw.csv."""
    for i in ids:
        rep = reportdata.load(i)
        csv = out / i / "raw.csv"
        raw = report.read_rows(csv) if csv.exists() else []
        text = reporttable.report_markdown(rep, set(SERVERS), raw, UNAVAILABLE, ["- rebuilt from raw.csv; the settings are in README.md"])
        (out / f"report-{i}.md").write_text(text)
        if plots:
            reporttable.write_charts(out, rep, set(SERVERS), raw, UNAVAILABLE)


def summary(ran: list[Ran], out: Path) -> list[str]:
    lines = []
    for r in ran:
        csv = out / r.report.id / "raw.csv"
        raw = report.read_rows(csv) if r.outcome and csv.exists() else []
        lines += reporttable.summary_lines(r.report, set(SERVERS), raw, UNAVAILABLE)
    return lines


def write_readme(out: Path, ran: list[Ran], invocation: str, note: str, settings: Settings, reps: int, load_at_start: str) -> None:
    versions: dict[str, str] = {}
    commands: list[str] = []
    for r in ran:
        if r.outcome:
            versions |= r.outcome.versions
            commands += r.outcome.commands
    md = [
        "# The reports' tables, reproduced",
        "",
        f"Made with `{invocation}`.",
        "",
        *([note, ""] if note else []),
        "## Tables",
        "",
        *(f"- [report {r.report.id}](report-{r.report.id}.md): {r.report.title}" + (f" — not run: {r.skipped}" if r.skipped else "") for r in ran),
        "",
        "## kiln against the fastest of each table's systems",
        "",
        *summary(ran, out),
        "",
        "## Machine",
        "",
        *report.machine(),
        f"- load average when the run started: {load_at_start}",
        "",
        "## Load generators",
        "",
        *report.tool_versions(),
        "",
        "## Settings",
        "",
        *settings_lines(settings, reps),
        "",
        "## Servers",
        "",
        "| server | what | version |",
        "|---|---|---|",
        *(f"| {n} | {SERVERS[n].description if n in SERVERS else ''} | {v} |" for n, v in versions.items()),
        *(["", "Not registered:", "", *(f"- {m}: {why}" for m, why in UNAVAILABLE.items())] if UNAVAILABLE else []),
        "",
        "## Files",
        "",
        "- `report-NNN.md`: each report's table beside the same systems and kiln measured here; `report-NNN-<table>.png`: its charts",
        "- `NNN/raw.csv`: one row per server × workload × repetition; `NNN/output/`: every load generator's output; "
        "`NNN/logs/`: build and server logs",
        "- `commands.txt`: every command, in order",
    ]
    (out / "README.md").write_text("\n".join(md) + "\n")
    (out / "commands.txt").write_text("\n".join(commands) + "\n")
