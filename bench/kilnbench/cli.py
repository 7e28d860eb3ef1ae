"""The command line of bench/run."""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import shlex
import sys
from pathlib import Path

from . import baseline, peercheck, report, reportdata, reportrun, reporttable
from .install import Missing, ensure_python_module
from .load import Settings
from .registry import BY_NAME as SERVERS
from .registry import UNAVAILABLE
from .runner import CANNOT_BE_HAD, Plan, Runner
from .servers import SERVERS as MODERN
from .servers import Options, Paths
from .workloads import BY_NAME as WORKLOADS
from .workloads import GROUPS as WORKLOAD_GROUPS
from .workloads import WORKLOADS as ALL_WORKLOADS

QUICK = Settings(duration_s=1, warmup_s=0, ab_requests=5_000, httperf_rate=500, idle_conns=500)
"""--quick: a smoke test of seconds, not a measurement."""

REPORT_TABLES = Settings(duration_s=4, warmup_s=1, ab_requests=100_000, ab_time_limit_s=4)
"""--report-table: each report's tool, every ab and httperf run capped at --duration seconds, so that
all five tables take about half an hour (`bench/run` prints its estimate before it starts)."""


def _names(text: str, known: dict, what: str, groups: dict[str, list[str]] | None = None) -> list:
    """The entries `text` names, comma-separated; a group's name stands for its members, each taken once."""
    groups = groups or {}
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known and n not in groups]
    if unknown:
        choices = ", ".join([*known, *(f"{g} (group)" for g in groups)])
        raise SystemExit(f"bench/run: unknown {what}: {', '.join(unknown)} (known: {choices})")
    expanded = [member for n in names for member in groups.get(n, [n])]
    return [known[n] for n in dict.fromkeys(expanded)]


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench/run",
        description="Build, start and drive kiln and its peers side by side; write tables, CSV and charts.",
    )
    p.add_argument("--quick", action="store_true", help="smoke test: kiln only, 1 s per workload, 1 rep")
    p.add_argument(
        "--servers",
        help=f"comma-separated, from: {', '.join(SERVERS)} [kiln and the modern peers; the reports' own systems "
        "run when named, or through --report-table]",
    )
    p.add_argument(
        "--workloads",
        help=f"comma-separated, from: {', '.join(WORKLOADS)}; or a group: "
        + "; ".join(f"{g} = {', '.join(m)}" for g, m in WORKLOAD_GROUPS.items()),
    )
    p.add_argument("--out", type=Path, help="result folder [bench/results/<date>-<label>]")
    p.add_argument("--label", help="names the result folder [quick or full]")
    p.add_argument("--reps", type=int, help="repetitions per server and workload [3; quick 1]")
    p.add_argument("--duration", type=int, help="seconds per wrk/httperf run [10; quick 1]")
    p.add_argument("--warmup", type=int, help="seconds of warm-up before each workload [2; quick 0]")
    p.add_argument("--ab-requests", type=int, help="requests per ab run [100000; quick 5000]")
    p.add_argument("--httperf-rate", type=int, help="httperf new connections per second, 10 requests each [1000]")
    p.add_argument("--idle-conns", type=int, help="connections held for the idle-memory test [10000; quick 500]")
    p.add_argument(
        "--database",
        help="database URL for the db workloads, postgres://... or sqlite://PATH (kiln --database, peers' DATABASE_URL)",
    )
    p.add_argument(
        "--baseline",
        metavar="REV_OR_BINARY",
        help=f"what the server {baseline.NAME} runs: a kiln-demo binary, or a git revision built in release "
        f"[{baseline.DEFAULT}]; the run then compares kiln's CPU per request with it (baseline.md)",
    )
    p.add_argument("--note", default="", help="a sentence for the run's README (e.g. that the machine was shared)")
    p.add_argument("--no-build", action="store_true", help="use the binaries already built")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG charts")
    p.add_argument("--report", type=Path, metavar="DIR", help="only rebuild summary.md and charts from DIR/raw.csv "
                   "(with --report-table: report-NNN.md and its charts from DIR/NNN/raw.csv)")
    p.add_argument(
        "--report-table",
        metavar="NNN",
        help=f"reproduce a report's table ({', '.join(reportdata.REPORT_IDS)} or all): its workloads with its tool, "
        "on its systems that are registered and kiln [reps 2; duration 4 s caps every run; warm-up 1 s]",
    )
    p.add_argument("--check-peers", action="store_true", help="build and start each registered server (or --servers) "
                   "and check its answers on the endpoints it claims; exit 1 if one that can be had fails")
    return p.parse_args(argv)


def _settings(args: argparse.Namespace) -> Settings:
    base = QUICK if args.quick else REPORT_TABLES if args.report_table else Settings()
    overrides = {
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "ab_requests": args.ab_requests,
        "httperf_rate": args.httperf_rate,
        "idle_conns": args.idle_conns,
    }
    settings = base.__dict__ | {k: v for k, v in overrides.items() if v is not None}
    if args.report_table:
        settings["ab_time_limit_s"] = settings["duration_s"]
    return Settings(**settings)


def _settings_lines(settings: Settings, reps: int) -> list[str]:
    return [
        f"- repetitions: {reps}, servers alternating (each repetition starts from the next server)",
        "- server pinned to CPU 0 with one worker/process (`taskset -c 0`); load generator pinned to CPU 1",
        f"- wrk: 1 thread, {settings.duration_s} s per run, {settings.warmup_s} s warm-up before each workload, "
        "100 connections unless the workload says otherwise, 10 s request timeout",
        f"- pipelined: depth {settings.pipeline_depth} through `bench/kilnbench/pipeline.lua`",
        f"- ab: `-r -k -n {settings.ab_requests} -c 100`",
        f"- httperf: `--rate {settings.httperf_rate}` connections/s × `--num-calls {settings.httperf_calls}` "
        f"= {settings.httperf_rate * settings.httperf_calls:,} requests/s offered, for {settings.duration_s} s",
        f"- idle memory: {settings.idle_conns:,} keep-alive connections, one request each, then held idle",
    ]


def _raise_fd_limit() -> None:
    """Servers and wrk inherit this: 10,000 idle connections need more than the usual 1,024."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, 65536)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def _plots(out: Path, table, install: bool) -> None:
    have = ensure_python_module("matplotlib", "matplotlib") if install else _importable("matplotlib")
    if not have:
        print("bench/run: matplotlib missing, no charts (pip install -r bench/requirements.txt)", flush=True)
        return
    report.write_plots(out, table)


def _importable(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    root = Path(__file__).resolve().parents[2]
    if args.report_table:
        return _report_tables(args, root, argv)
    if args.check_peers:
        return _check_peers(args, root)
    if args.report:
        rows = report.read_rows(args.report / "raw.csv")
        table = report.write_summary(args.report, rows, f"kiln benchmark: {args.report.name}", "Rebuilt from raw.csv; the settings are in README.md.")
        if not args.no_plots:
            _plots(args.report, table, install=True)
        return 0

    label = args.label or ("quick" if args.quick else "full")
    out = (args.out or root / "bench" / "results" / f"{datetime.date.today().isoformat()}-{label}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    # The reports' own systems (peers_*.py) are heavy and have their own tables: a plain run
    # takes kiln's registry (kiln and the modern peers) unless they are named.
    servers = _names(args.servers or ("kiln" if args.quick else ",".join(s.name for s in MODERN)), SERVERS, "server")
    workloads = _names(args.workloads, WORKLOADS, "workload", WORKLOAD_GROUPS) if args.workloads else [
        w for w in ALL_WORKLOADS if w.default and (w.quick or not args.quick)
    ]
    reps = args.reps or (1 if args.quick else 3)
    settings = _settings(args)
    if args.baseline:
        os.environ[baseline.ENV] = args.baseline
    _raise_fd_limit()
    load_at_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    invocation = shlex.join(["bench/run", *(sys.argv[1:] if argv is None else argv)])
    print(f"bench/run: {len(servers)} servers × {len(workloads)} workloads × {reps} reps -> {out}", flush=True)

    plan = Plan(servers, workloads, settings, reps, out, Paths(root), Options(args.database), build=not args.no_build)
    try:
        outcome = Runner(plan).run()
    except Missing as e:
        print(f"bench/run: {e}", file=sys.stderr)
        return 2

    title = f"kiln benchmark: {out.name}"
    settings_lines = _settings_lines(settings, reps)
    rows = report.read_rows(out / "raw.csv")
    table = report.write_summary(out, rows, title, " ".join(s.lstrip("- ") + ";" for s in settings_lines[:2]))
    report.write_readme(
        out, title, invocation, args.note, settings_lines, outcome.versions,
        {s.name: s.description for s in servers}, outcome.commands, load_at_start,
    )  # fmt: skip
    if not args.no_plots:
        _plots(out, table, install=not args.quick)
    print(f"bench/run: wrote {out}/summary.md", flush=True)
    if any(s.name == baseline.NAME for s in servers):
        for line in baseline.write(out, rows, baseline.spec()):
            print(f"bench/run: REGRESSION: {line}", file=sys.stderr, flush=True)
    return _verdict(outcome, servers, table, quick=args.quick)


def _report_ids(text: str) -> list[str]:
    ids = list(reportdata.REPORT_IDS) if text == "all" else [i.strip() for i in text.split(",") if i.strip()]
    unknown = [i for i in ids if i not in reportdata.REPORT_IDS]
    if unknown:
        raise SystemExit(f"bench/run: unknown report {', '.join(unknown)} (known: {', '.join(reportdata.REPORT_IDS)}, all)")
    return ids


def _report_tables(args: argparse.Namespace, root: Path, argv: list[str] | None) -> int:
    ids = _report_ids(args.report_table)
    if args.report:
        reportrun.rebuild(args.report.resolve(), ids, plots=not args.no_plots)
        return 0
    out = (args.out or root / "bench" / "results" / f"{datetime.date.today().isoformat()}-{args.label or 'reports'}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    reps = args.reps or 2
    settings = _settings(args)
    _raise_fd_limit()
    load_at_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    invocation = shlex.join(["bench/run", *(sys.argv[1:] if argv is None else argv)])
    try:
        only = {s.name for s in _names(args.servers, SERVERS, "server")} if args.servers else None
        ran = reportrun.run(ids, settings, reps, out, Paths(root), args.database, build=not args.no_build, only=only)
    except Missing as e:
        print(f"bench/run: {e}", file=sys.stderr)
        return 2
    reportrun.write_readme(out, ran, invocation, args.note, settings, reps, load_at_start)
    if not args.no_plots and ensure_python_module("matplotlib", "matplotlib"):
        for r in ran:
            raw = report.read_rows(out / r.report.id / "raw.csv") if r.outcome else []
            reporttable.write_charts(out, r.report, set(SERVERS), raw, UNAVAILABLE)
    print(f"bench/run: wrote {out}/README.md and report-NNN.md", flush=True)
    failures = [f for r in ran if r.outcome for f in r.outcome.kiln_failures]
    for f in failures:
        print(f"bench/run: kiln: {f}", file=sys.stderr)
    return 1 if failures else 0


def _check_peers(args: argparse.Namespace, root: Path) -> int:
    for module, why in UNAVAILABLE.items():
        print(f"{CANNOT_BE_HAD:<14} {module}: {why}", flush=True)
    # kiln-base is kiln built at another revision, not a peer: checked only when named.
    servers = _names(args.servers, SERVERS, "server") if args.servers else [
        s for s in SERVERS.values() if s.name != baseline.NAME
    ]
    out = (args.out or root / "bench" / "results" / f"{datetime.date.today().isoformat()}-check-peers").resolve()
    verdicts = peercheck.check_all(servers, Paths(root), Options(args.database), out, build=not args.no_build)
    failed = [v.server for v in verdicts if v.status == peercheck.FAILED]
    print(f"bench/run: {len(verdicts) - len(failed)} of {len(verdicts)} servers ok or cannot be had; failed: {', '.join(failed) or 'none'}")
    return 1 if failed else 0


def _verdict(outcome, servers, table, quick: bool) -> int:
    """Non-zero when kiln was asked for and did not answer (or, in --quick, answered wrongly)."""
    if not any(s.name == "kiln" for s in servers):
        return 0
    measured = any("kiln" in by_server for by_server in table.values())
    problems = list(outcome.kiln_failures)
    if quick:
        problems += [
            f"{r['workload']}: {r['non2xx']} non-2xx, {r['socket_errors']} socket errors"
            for r in outcome.rows
            if r["server"] == "kiln" and r["status"] == "ok" and (r["non2xx"] or r["socket_errors"])
        ]
    if not measured:
        problems.append("kiln answered no workload")
    for p in problems:
        print(f"bench/run: kiln: {p}", file=sys.stderr)
    return 1 if problems else 0
