"""What a run leaves behind: summary.md, README.md, commands.txt and one PNG chart per workload.

raw.csv is written row by row while the run goes (runner.py); everything here
is derived from those rows, so a report can be rebuilt from raw.csv alone
(`bench/run --report DIR`).
"""

from __future__ import annotations

import csv
import os
import platform
import statistics
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from .workloads import BY_NAME as WORKLOADS
from .workloads import MIX_CONNS, MIX_MODES

MEASURED = "ok"
REFERENCE = "floor"
BASELINE = "kiln"


@dataclass
class Cell:
    """The median of one server on one workload over its reps."""

    server: str
    workload: str
    reps: int
    rps: float | None
    rps_min: float | None
    rps_max: float | None
    p50: float | None
    p99: float | None
    max: float | None
    errors: int
    rss_idle_kb: float | None
    rss_peak_kb: float | None
    cpu_s: float | None
    requests: float | None
    cpu_us_per_req: float | None = None
    """Server CPU time (utime + stime of its process tree) per request completed, µs: the verdict
    when one wrk thread caps req/s (BENCHMARKS.md)."""


def _num(value: str) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def cells(rows: list[dict]) -> dict[str, dict[str, Cell]]:
    """workload -> server -> Cell, from the measured rows."""
    grouped: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in rows:
        if row["status"] == MEASURED and not row["workload"].startswith("("):
            grouped[(row["workload"], row["server"])].append(row)
    table: dict[str, dict[str, Cell]] = defaultdict(dict)
    for (workload, server), group in grouped.items():
        rps = [_num(r["rps"]) for r in group]
        present = [v for v in rps if v is not None]
        peaks = [v for v in (_num(r["rss_peak_kb"]) for r in group) if v is not None]
        table[workload][server] = Cell(
            server=server,
            workload=workload,
            reps=len(group),
            rps=_median(rps),
            rps_min=min(present) if present else None,
            rps_max=max(present) if present else None,
            p50=_median([_num(r["lat_p50_ms"]) for r in group]),
            p99=_median([_num(r["lat_p99_ms"]) for r in group]),
            max=max((v for v in (_num(r["lat_max_ms"]) for r in group) if v is not None), default=None),
            errors=sum(int(_num(r["errors"]) or 0) for r in group),
            rss_idle_kb=_median([_num(r["rss_idle_kb"]) for r in group]),
            rss_peak_kb=max(peaks) if peaks else None,
            cpu_s=_median([_num(r["cpu_s"]) for r in group]),
            requests=_median([_num(r["requests"]) for r in group]),
            cpu_us_per_req=_median([_per_request_us(r) for r in group]),
        )
    return table


def _per_request_us(row: dict) -> float | None:
    cpu, requests = _num(row["cpu_s"]), _num(row["requests"])
    return cpu * 1e6 / requests if cpu is not None and requests else None


def _workload_order(table: dict[str, dict[str, Cell]]) -> list[str]:
    known = [w for w in WORKLOADS if w in table]
    return known + sorted(w for w in table if w not in WORKLOADS)


def _server_order(by_server: dict[str, Cell]) -> list[str]:
    """The floor first (the reference line), then fastest first."""
    rest = sorted((s for s in by_server if s != REFERENCE), key=lambda s: -(by_server[s].rps or 0))
    return ([REFERENCE] if REFERENCE in by_server else []) + rest


def _f(value: float | None, fmt: str = "{:,.0f}") -> str:
    return "–" if value is None else fmt.format(value)


def _mib(kb: float | None) -> str:
    return "–" if kb is None else f"{kb / 1024:.1f}"


def _ratio(value: float | None, base: float | None) -> str:
    return "–" if value is None or not base else f"{value / base:.2f}"


def _percent(value: float | None, base: float | None) -> str:
    return "–" if value is None or not base else f"{100 * value / base:.0f}%"


def _workload_table(workload: str, by_server: dict[str, Cell]) -> list[str]:
    kiln = by_server.get(BASELINE)
    floor = by_server.get(REFERENCE)
    lines = [
        "| server | req/s | vs kiln | of floor | p50 ms | p99 ms | max ms | errors | RSS idle MiB | RSS peak MiB | CPU s "
        "| CPU µs/req | CPU/req vs kiln |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for name in _server_order(by_server):
        c = by_server[name]
        label = f"**{name}**" if name == BASELINE else (f"_{name} (reference)_" if name == REFERENCE else name)
        lines.append(
            f"| {label} | {_f(c.rps)} | {_ratio(c.rps, kiln.rps if kiln else None)} | "
            f"{_percent(c.rps, floor.rps if floor else None)} | {_f(c.p50, '{:.2f}')} | {_f(c.p99, '{:.2f}')} | "
            f"{_f(c.max, '{:.1f}')} | {c.errors} | {_mib(c.rss_idle_kb)} | {_mib(c.rss_peak_kb)} | {_f(c.cpu_s, '{:.1f}')} | "
            f"{_f(c.cpu_us_per_req, '{:.1f}')} | {_ratio(c.cpu_us_per_req, kiln.cpu_us_per_req if kiln else None)} |"
        )
    return lines


def paired_ratios(rows: list[dict], workload: str) -> dict[str, tuple[float | None, float | None, int]]:
    """server -> (median of req/s ÷ kiln's, median of CPU/req ÷ kiln's, pairs), each ratio taken
    within one repetition: the two runs of a pair were seconds apart, so a machine that drifts
    between fast and slow spells over a run moves both alike, where medians of each server's
    own runs can land in different spells."""
    by_rep: dict[str, dict[str, dict]] = defaultdict(dict)
    for row in rows:
        if row["status"] == MEASURED and row["workload"] == workload:
            by_rep[row["rep"]][row["server"]] = row
    pairs: dict[str, list[tuple[float | None, float | None]]] = defaultdict(list)
    for servers in by_rep.values():
        base = servers.get(BASELINE)
        if base is None:
            continue
        base_rps, base_cpu = _num(base["rps"]), _per_request_us(base)
        for name, row in servers.items():
            if name == BASELINE:
                continue
            rps, cpu = _num(row["rps"]), _per_request_us(row)
            pairs[name].append(
                (rps / base_rps if rps and base_rps else None, cpu / base_cpu if cpu and base_cpu else None)
            )
    return {
        name: (_median([p[0] for p in ratios]), _median([p[1] for p in ratios]), len(ratios))
        for name, ratios in pairs.items()
    }


def _paired_table(rows: list[dict], workload: str) -> list[str]:
    paired = paired_ratios(rows, workload)
    if not paired or not any(n > 1 for _, _, n in paired.values()):
        return []
    lines = [
        "",
        "Paired within each repetition (median of the per-repetition ratios):",
        "",
        "| server | req/s vs kiln | CPU/req vs kiln | pairs |",
        "|---|--:|--:|--:|",
    ]
    for name in sorted(paired):
        rps, cpu, n = paired[name]
        lines.append(f"| {name} | {_f(rps, '{:.3f}')} | {_f(cpu, '{:.3f}')} | {n} |")
    return lines


IDLE_TOOLS = ("idle", "ws-idle")
"""The tools that open connections and hold them idle: their workloads are memory figures."""


def _idle_workloads(table: dict[str, dict[str, Cell]]) -> list[str]:
    """The workloads of the run that held connections idle, `idle-10k` first."""
    held = [w for w in table if WORKLOADS.get(w) is not None and WORKLOADS[w].tool in IDLE_TOOLS]
    return sorted(held, key=lambda w: (w != "idle-10k", w))


def kib_per_conn(c: Cell | None) -> float | None:
    """RSS with the connections held minus RSS right before they opened, ÷ connections held."""
    if c is None or not c.rss_peak_kb or not c.rss_idle_kb or not c.requests:
        return None
    return (c.rss_peak_kb - c.rss_idle_kb) / c.requests


def _idle_table(rows: list[dict], table: dict[str, dict[str, Cell]]) -> list[str]:
    at_start: dict[str, list[float | None]] = defaultdict(list)
    for row in rows:
        if row["workload"] == "(idle)" and row["status"] == MEASURED:
            at_start[row["server"]].append(_num(row["rss_idle_kb"]))
    idle = _idle_workloads(table)
    peaks: dict[str, float] = defaultdict(float)
    for workload, by_server in table.items():
        for name, c in by_server.items():
            if workload not in idle:
                peaks[name] = max(peaks[name], c.rss_peak_kb or 0)
    servers = set(at_start) | {name for w in idle for name in table[w]}
    names = sorted(servers, key=lambda s: (s != REFERENCE, s != BASELINE, s))
    lines = [
        "| server | RSS at start MiB | peak under load MiB | held idle | RSS before MiB | with idle conns MiB | idle conns held | KiB per conn |",
        "|---|--:|--:|---|--:|--:|--:|--:|",
    ]
    for name in names:
        start, peak = _mib(_median(at_start.get(name, []))), _mib(peaks.get(name) or None)
        held = [(w, table[w][name]) for w in idle if name in table[w]] or [("–", None)]
        for workload, c in held:
            per_conn = kib_per_conn(c)
            lines.append(
                f"| {name} | {start} | {peak} | {workload} | {_mib(c.rss_idle_kb if c else None)} | "
                f"{_mib(c.rss_peak_kb if c else None)} | {_f(c.requests if c else None)} | "
                f"{_f(per_conn, '{:.2f}')} |"
            )
    return lines


def _variant_table(table: dict[str, dict[str, Cell]], pairs: list[tuple[str, str]], workloads: list[str]) -> list[str]:
    """req/s of each (plain, variant) server pair on the workloads both ran."""
    lines = ["| workload | server | req/s, plain | req/s, variant | variant ÷ plain |", "|---|---|--:|--:|--:|"]
    for workload in workloads:
        by_server = table.get(workload, {})
        for plain, variant in pairs:
            if plain in by_server and variant in by_server:
                a, b = by_server[plain].rps, by_server[variant].rps
                lines.append(f"| {workload} | {plain} / {variant} | {_f(a)} | {_f(b)} | {_ratio(b, a)} |")
    return lines if len(lines) > 2 else []


def overview_table(table: dict[str, dict[str, Cell]], workloads: list[str]) -> list[str]:
    """Median req/s of every server on the throughput workloads, floor first: the table for the project README."""
    workloads = [w for w in workloads if WORKLOADS.get(w) is None or WORKLOADS[w].tool not in IDLE_TOOLS]
    servers: set[str] = set()
    for w in workloads:
        servers |= set(table[w])
    kiln_first = sorted(servers, key=lambda s: (s != REFERENCE, s != BASELINE, s))
    lines = ["| server | " + " | ".join(workloads) + " |", "|---|" + "--:|" * len(workloads)]
    for name in kiln_first:
        cells_ = []
        for w in workloads:
            c = table[w].get(name)
            kiln = table[w].get(BASELINE)
            if c is None:
                cells_.append("")
            elif name == BASELINE or kiln is None:
                cells_.append(_f(c.rps))
            else:
                cells_.append(f"{_f(c.rps)} ({_ratio(c.rps, kiln.rps)})")
        label = f"_{name}_" if name == REFERENCE else (f"**{name}**" if name == BASELINE else name)
        lines.append(f"| {label} | " + " | ".join(cells_) + " |")
    return lines


def mix_tables(table: dict[str, dict[str, Cell]]) -> list[str]:
    """The non-blocking Ruby report's layout, one table per server that ran `/mix`: a row per
    `every`, a column per concurrency and mode (median req/s), async ÷ blocking, and the errors."""
    found: dict[str, dict[tuple[int, str, int], Cell]] = defaultdict(dict)
    for workload, by_server in table.items():
        w = WORKLOADS.get(workload)
        if w is None or w.mix is None:
            continue
        for server, c in by_server.items():
            found[server][(w.mix.every, w.mix.mode, w.conns)] = c
    lines: list[str] = []
    for server in sorted(found, key=lambda s: (s != BASELINE, s)):
        got = found[server]
        conns = [n for n in MIX_CONNS if any(k[2] == n for k in got)]
        columns = [(n, m) for n in conns for m in MIX_MODES]
        header = [f"c={n} {m}" for n, m in columns] + [f"c={n} async ÷ blocking" for n in conns]
        lines += [
            *([""] if lines else []),
            f"### {server}: req/s (median), a long query every N requests",
            "",
            "| every N | " + " | ".join(header) + " | errors (blocking / async) |",
            "|--:|" + "--:|" * len(header) + "--:|",
        ]
        for every in sorted({k[0] for k in got}):
            row = [_f(got[(every, m, n)].rps) if (every, m, n) in got else "" for n, m in columns]
            for n in conns:
                b, a = got.get((every, "blocking", n)), got.get((every, "async", n))
                row.append(_ratio(a.rps, b.rps) if a and b else "–")
            errors = [sum(c.errors for k, c in got.items() if k[0] == every and k[1] == m) for m in MIX_MODES]
            lines.append(f"| {every} | " + " | ".join(row) + f" | {' / '.join(str(e) for e in errors)} |")
    return lines


def _not_run(rows: list[dict]) -> list[str]:
    seen = set()
    lines = ["| server | workload | status | why |", "|---|---|---|---|"]
    for row in rows:
        if row["status"] == MEASURED:
            continue
        key = (row["server"], row["workload"], row["status"], row["note"])
        if key in seen:
            continue
        seen.add(key)
        note = row["note"].replace("|", "\\|")
        lines.append(f"| {row['server']} | {row['workload']} | {row['status']} | {note} |")
    return lines if len(lines) > 2 else []


def write_summary(out: Path, rows: list[dict], title: str, settings_line: str) -> dict[str, dict[str, Cell]]:
    table = cells(rows)
    workloads = _workload_order(table)
    mix = mix_tables(table)
    # The mix table shows the /mix workloads better than a column each in the overview.
    overview = [w for w in workloads if not (mix and w in WORKLOADS and WORKLOADS[w].mix) and w not in _idle_workloads(table)]
    md = [
        f"# {title}",
        "",
        settings_line,
        "",
        "Each figure is the median over the repetitions; servers alternated between repetitions. "
        "`vs kiln` is req/s divided by kiln's in the same run; `of floor` is the share of the C "
        "floor's req/s (the machine's limit). Errors count non-2xx responses, socket errors and timeouts. "
        "RSS is summed over the server's processes; peak is the highest VmRSS sampled during the workload.",
    ]
    if overview:
        md += ["", "## Overview: req/s (ratio to kiln)", "", *overview_table(table, overview)]
    if mix:
        md += [
            "",
            "## Mix: blocking vs async database access (the non-blocking Ruby report's table)",
            "",
            (
                "Each request runs one short query; every N-th also runs the long one (`pg_sleep`). "
                "`blocking` waits for the database on the worker thread, `async` serves other requests meanwhile. "
                "Errors are summed over the concurrencies and repetitions of the row."
            ),
            "",
            *mix,
        ]
    for workload in workloads:
        w = WORKLOADS.get(workload)
        what = f" — {w.description}" if w else ""
        if workload == "idle-10k":
            continue
        md += ["", f"## {workload}{what}", "", f"![{workload}](plot-{workload}.png)", "", *_workload_table(workload, table[workload]), *_paired_table(rows, workload)]
    md += ["", "## Memory", "", *_idle_table(rows, table)]
    files = ["pong", "static", "pong-httperf", "static-httperf"]
    access = _variant_table(table, [(BASELINE, f"{BASELINE}+log"), ("nginx", "nginx+log")], files)
    if access:
        md += ["", "## Access log off (plain) vs on (variant)", "", *access]
    cache = _variant_table(table, [("nginx", "nginx-nocache")], files[1::2])
    if cache:
        md += ["", "## nginx open_file_cache on (plain) vs off (variant)", "", *cache]
    not_run = _not_run(rows)
    if not_run:
        md += ["", "## Not measured", "", *not_run]
    (out / "summary.md").write_text("\n".join(md) + "\n")
    return table


def write_plots(out: Path, table: dict[str, dict[str, Cell]]) -> list[str]:
    """One horizontal bar chart per workload (req/s, min–max whiskers); idle-10k charts memory."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for workload, by_server in table.items():
        names = _server_order(by_server)
        if workload == "idle-10k":
            values = [(by_server[n].rss_peak_kb or 0) / 1024 for n in names]
            errors = None
            xlabel = f"server RSS with {_f(max(c.requests or 0 for c in by_server.values()))} idle connections (MiB)"
        else:
            values = [by_server[n].rps or 0 for n in names]
            low = [v - (by_server[n].rps_min or v) for n, v in zip(names, values)]
            high = [(by_server[n].rps_max or v) - v for n, v in zip(names, values)]
            errors = [low, high]
            xlabel = "requests per second (median, whiskers: min–max over reps)"
        colours = ["#999999" if n == REFERENCE else "#d9531e" if n == BASELINE else "#4a7ab5" for n in names]
        fig, ax = plt.subplots(figsize=(8, 0.45 * len(names) + 1.4))
        ax.barh(names[::-1], values[::-1], color=colours[::-1], xerr=[e[::-1] for e in errors] if errors else None)
        for i, v in enumerate(values[::-1]):
            ax.text(v, i, f" {v:,.0f}" if workload != "idle-10k" else f" {v:.1f}", va="center", fontsize=8)
        w = WORKLOADS.get(workload)
        ax.set_title(f"{workload}: {w.description}" if w else workload, fontsize=10)
        ax.set_xlabel(xlabel, fontsize=9)
        ax.margins(x=0.15)
        fig.tight_layout()
        name = f"plot-{workload}.png"
        fig.savefig(out / name, dpi=100)
        plt.close(fig)
        written.append(name)
    return written


def _first_line(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "not found"
    lines = (done.stdout + done.stderr).strip().splitlines()
    return lines[0] if lines else "unknown"


def machine() -> list[str]:
    """A description of this machine, one fact a line."""
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
    except (OSError, ValueError):
        mem_kb = 0
    distro = "unknown"
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                distro = line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    uname = platform.uname()
    return [
        f"- CPU: {model}, {os.cpu_count()} logical CPUs",
        f"- memory: {mem_kb / 1024 / 1024:.1f} GiB",
        f"- kernel: {uname.system} {uname.release} {uname.version} {uname.machine}",
        f"- OS: {distro}",
        f"- load average at report time: {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
    ]


def tool_versions() -> list[str]:
    return [
        f"- wrk: {_first_line(['wrk', '-v'])}",
        f"- ab: {_first_line(['ab', '-V'])}",
        f"- httperf: {_first_line(['httperf', '--version'])}",
        f"- Python: {sys.version.split()[0]}",
    ]


def write_readme(
    out: Path,
    title: str,
    invocation: str,
    note: str,
    settings_lines: list[str],
    versions: dict[str, str],
    descriptions: dict[str, str],
    commands: list[str],
    load_at_start: str,
) -> None:
    builds = [c for c in commands if " build" in c or c.startswith("cc ") or "venv" in c or "pip" in c]
    starts = [c for c in commands if c.startswith("taskset -c 0")]
    loads = [c for c in commands if c.startswith("taskset -c 1")]
    first_server_loads = []
    port = None
    for c in loads:
        this = c.split("127.0.0.1")[-1].split("/")[0] if "127.0.0.1" in c else None
        port = port or this
        if this == port:
            first_server_loads.append(c)
    md = [
        f"# {title}",
        "",
        f"Made with `{invocation}`.",
        "",
        *([note, ""] if note else []),
        "## Machine",
        "",
        *machine(),
        f"- load average when the run started: {load_at_start}",
        "",
        "## Load generators",
        "",
        *tool_versions(),
        "",
        "## Servers",
        "",
        "| server | what | version |",
        "|---|---|---|",
        *(f"| {name} | {descriptions.get(name, '')} | {v} |" for name, v in versions.items()),
        "",
        "## Settings",
        "",
        *settings_lines,
        "",
        "## Exact commands",
        "",
        "Builds:",
        "",
        "```",
        *dict.fromkeys(builds),
        "```",
        "",
        "Server starts (each on a fresh free port; env: PORT, STATIC_DIR, and GOMAXPROCS=1 for go):",
        "",
        "```",
        *starts[: len(versions)],
        "```",
        "",
        "Load runs against the first server started (every server gets the same, on its own port; "
        "each measured run is preceded by a warm-up run of the same kind). All commands in order are in "
        "`commands.txt`; each run's raw output is in `output/`, server logs in `logs/`.",
        "",
        "```",
        *dict.fromkeys(first_server_loads),
        "```",
        "",
        "## Files",
        "",
        "- `summary.md`: the tables (medians, ratios to kiln, share of the floor) and charts",
        "- `raw.csv`: one row per server × workload × repetition, plus `(idle)` rows (RSS right after start) "
        "and rows for what could not be measured",
        "- `plot-<workload>.png`: one chart per workload",
    ]
    (out / "README.md").write_text("\n".join(md) + "\n")
    (out / "commands.txt").write_text("\n".join(commands) + "\n")

