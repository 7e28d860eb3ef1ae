"""A report's table laid out as the report laid it out, beside what was measured here.

Each row: the report's system and figure, the registry entry that reproduces it and what it
measured here (req/s, server CPU per request, errors as the tool counts them, RSS), kiln measured
here on the same workload, and kiln's ratio. Everything comes from the report's data file and the
run's raw.csv, so a table can be rebuilt from them alone.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from .report import MEASURED, Cell, cells
from .reportdata import Report, Row, Table


@dataclass(frozen=True)
class Here:
    """What reproduces a row here: the server's name and its measurement, or why there is none."""

    server: str | None
    cell: Cell | None
    failed: int | None
    why: str = ""


def _num(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def failures(rows: list[dict]) -> dict[tuple[str, str], int]:
    """(workload, server) -> the tool's own count of failed requests, summed over reps."""
    total: dict[tuple[str, str], int] = defaultdict(int)
    for row in rows:
        value = _num(row.get("failed"))
        if row["status"] == MEASURED and value is not None:
            total[(row["workload"], row["server"])] += int(value)
    return dict(total)


def _problems(rows: list[dict]) -> dict[tuple[str, str], str]:
    """(server, workload or "") -> why it has no measurement: a failed build or start, a crash,
    a nonconforming answer, a load generator that failed."""
    found: dict[tuple[str, str], str] = {}
    for row in rows:
        if row["status"] == MEASURED:
            continue
        workload = "" if row["workload"].startswith("(") else row["workload"]
        found.setdefault((row["server"], workload), f"{row['status']}: {row['note']}".strip(": "))
    return found


def resolve(row: Row, registered: set[str], table: dict[str, dict[str, Cell]], raw: list[dict], unavailable: dict[str, str]) -> Here:
    """Which server reproduces `row` here, and its measurement or why there is none."""
    if not row.peers:
        return Here(None, None, None, row.why or "no peer reproduces it")
    name = next((p for p in row.peers if p in registered), None)
    if name is None:
        modules = "; ".join(unavailable.values())
        expected = ", ".join(row.peers)
        return Here(None, None, None, f"not registered (expected {expected})" + (f"; {modules}" if modules else ""))
    cell = table.get(row.workload, {}).get(name)
    failed = failures(raw).get((row.workload, name))
    if cell is not None:
        return Here(name, cell, failed)
    problems = _problems(raw)
    why = problems.get((name, row.workload)) or problems.get((name, ""))
    if why is None:
        ran = any(r["server"] == name for r in raw)
        why = "no answer on this endpoint (404) or the workload is not among its own" if ran else "not run"
    return Here(name, None, None, why)


def _f(value: float | None, fmt: str = "{:,.0f}") -> str:
    return "–" if value is None else fmt.format(value)


def _ratio(a: float | None, b: float | None) -> str:
    return "–" if a is None or not b else f"{a / b:.2f}"


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _label(row: Row) -> str:
    return f"{row.system}, c={row.conns}" if row.conns else row.system


def _report_figure(row: Row) -> str:
    text = row.figure_text
    if row.failed is not None:
        text += f" ({row.failed} failed)"
    return _escape(text)


def _rps(cell: Cell | None) -> str:
    if cell is not None and cell.requests == 0:
        return "0 (none completed)"
    return _f(cell.rps if cell else None)


def _errors(cell: Cell | None, failed: int | None) -> str:
    if cell is None:
        return "–"
    return f"{cell.errors}" + (f" ({failed} failed)" if failed is not None else "")


def table_lines(report: Report, t: Table, registered: set[str], raw: list[dict], unavailable: dict[str, str]) -> list[str]:
    """The markdown of one table, its heading and a line with kiln's ratio to the best peer."""
    measured = cells(raw)
    header = [
        "report's system", f"report's figure ({t.unit})", *(["report's RSS"] if t.rss else []), "server here",
        "req/s here", "CPU µs/req", "errors (tool's failed)", *(["RSS peak MiB"] if t.rss else []),
        "kiln req/s", "kiln CPU µs/req", *(["kiln RSS peak MiB"] if t.rss else []),
        "kiln ÷ here (req/s)", "here ÷ kiln (CPU/req)",
    ]  # fmt: skip
    lines = [f"### {report.id}/{t.key}: {t.title}", ""]
    if any(r.conns for r in t.rows):
        lines += [*grid_lines(t, registered, raw, unavailable), "", "Each cell in detail:", ""]
    lines += ["| " + " | ".join(header) + " |", "|---|" + "--:|" * (len(header) - 1)]
    notes: list[str] = []
    best: tuple[float, str, float | None, float | None, float | None] | None = None
    """The fastest of the report's systems measured here: its req/s, its name, kiln's req/s beside
    it, its CPU µs per request and kiln's."""
    for row in t.rows:
        here = resolve(row, registered, measured, raw, unavailable)
        kiln = measured.get(row.workload, {}).get(row.kiln)
        c = here.cell
        server = here.server or "–"
        if c is None:
            server += f" ({_escape(here.why)})"
        if row.note:
            notes.append(f"- {_label(row)}: {row.note}")
        if c is not None and c.rps and (best is None or c.rps > best[0]):
            best = (
                c.rps, f"{here.server}" + (f", c={row.conns}" if row.conns else ""), kiln.rps if kiln else None,
                c.cpu_us_per_req, kiln.cpu_us_per_req if kiln else None,
            )  # fmt: skip
        cols = [
            _escape(_label(row)), _report_figure(row), *([row.rss_text or "–"] if t.rss else []), server,
            _rps(c), _f(c.cpu_us_per_req if c else None, "{:.1f}"), _errors(c, here.failed),
            *([_f(c.rss_peak_kb / 1024 if c and c.rss_peak_kb else None, "{:.1f}")] if t.rss else []),
            f"{_f(kiln.rps if kiln else None)}" + ("" if row.kiln == "kiln" else f" ({row.kiln})"),
            _f(kiln.cpu_us_per_req if kiln else None, "{:.1f}"),
            *([_f(kiln.rss_peak_kb / 1024 if kiln and kiln.rss_peak_kb else None, "{:.1f}")] if t.rss else []),
            _ratio(kiln.rps if kiln else None, c.rps if c else None),
            _ratio(c.cpu_us_per_req if c else None, kiln.cpu_us_per_req if kiln else None),
        ]  # fmt: skip
        lines.append("| " + " | ".join(cols) + " |")
    lines.append("")
    lines.append(best_line(best))
    if notes:
        lines += ["", *dict.fromkeys(notes)]
    return lines


def grid_lines(t: Table, registered: set[str], raw: list[dict], unavailable: dict[str, str]) -> list[str]:
    """The mix table as the non-blocking report printed it: per ratio a nonblocking row, a blocking
    row and the advantage of nonblocking, a column per concurrency; each cell "report / the
    report's system here / kiln here" in req/s."""
    measured = cells(raw)
    conns = sorted({r.conns for r in t.rows if r.conns})
    cell: dict[tuple[str, int], tuple[float | None, float | None, float | None]] = {}
    order: list[str] = []
    for row in t.rows:
        here = resolve(row, registered, measured, raw, unavailable)
        kiln = measured.get(row.workload, {}).get(row.kiln)
        cell[(row.system, row.conns)] = (row.figure, here.cell.rps if here.cell else None, kiln.rps if kiln else None)
        order.append(row.system)
    lines = [
        "| ratio | " + " | ".join(f"c={n}: report / here / kiln" for n in conns) + " |",
        "|---|" + "--:|" * len(conns),
    ]
    systems = list(dict.fromkeys(order))
    for system in systems:
        lines.append(f"| {system} | " + " | ".join(" / ".join(_f(v) for v in cell[(system, n)]) for n in conns) + " |")
        if system.endswith("blocking") and not system.endswith("nonblocking"):
            partner = system.replace("blocking", "nonblocking")
            if partner in systems:
                gains = []
                for n in conns:
                    nb, b = cell[(partner, n)], cell[(system, n)]
                    gains.append(" / ".join(_advantage(x, y) for x, y in zip(nb, b)))
                lines.append(f"| {system.rsplit(',', 1)[0]}, advantage of nonblocking | " + " | ".join(gains) + " |")
    return lines


def _advantage(nonblocking: float | None, blocking: float | None) -> str:
    return "–" if nonblocking is None or not blocking else f"{100 * (nonblocking / blocking - 1):+.0f}%"


def summary_lines(report: Report, registered: set[str], raw: list[dict], unavailable: dict[str, str]) -> list[str]:
    """One line per table: kiln's ratio to the fastest of the report's systems measured here."""
    lines = []
    for t in report.tables:
        best = next(line for line in table_lines(report, t, registered, raw, unavailable) if line.startswith("kiln ÷ the fastest"))
        lines.append(f"- {report.id}/{t.key} ({t.title}): {best}")
    return lines


def best_line(best: tuple[float, str, float | None, float | None, float | None] | None) -> str:
    if best is None:
        return "kiln ÷ the fastest of the report's systems measured here: – (none measured beside kiln)"
    rps, name, kiln_rps, cpu, kiln_cpu = best
    return (
        f"kiln ÷ the fastest of the report's systems measured here ({name}, {rps:,.0f} req/s): "
        f"**{_ratio(kiln_rps, rps)}** in req/s, **{_ratio(cpu, kiln_cpu)}** in server CPU per request ({name} ÷ kiln)"
    )


def report_markdown(report: Report, registered: set[str], raw: list[dict], unavailable: dict[str, str], settings: list[str]) -> str:
    md = [
        f"# Report {report.id}: {report.title}",
        "",
        f"Source: <{report.source}>" + "".join(f", <{u}>" for u in report.also),
        "",
        f"- the report's machine: {report.machine}",
        f"- the report's tool: {report.tool}",
        f"- reproduced here with: {report.reproduced_with}",
        *settings,
        "",
        "The report's figures come from its machine and year; only the columns measured here compare with each other "
        "(same run, same machine, the server pinned to CPU 0 with one worker, the load generator on CPU 1). "
        "`kiln ÷ here` above 1 means kiln served more requests per second; `here ÷ kiln` above 1 means the other "
        "server spent more CPU per request. Where one load-generator thread is the ceiling, the CPU column decides. "
        "Errors are non-2xx responses, socket errors and timeouts; in brackets, failures as the tool itself counts "
        "them (ab's \"Failed requests\", httperf's \"Errors: total\"), as the reports quoted them.",
    ]
    for t in report.tables:
        md += ["", *table_lines(report, t, registered, raw, unavailable), "", f"![{report.id}/{t.key}]({chart_name(report, t)})"]
    return "\n".join(md) + "\n"


def chart_name(report: Report, t: Table) -> str:
    return f"report-{report.id}-{t.key}.png"


def write_charts(out: Path, report: Report, registered: set[str], raw: list[dict], unavailable: dict[str, str]) -> list[str]:
    """Per table, two panels: the report's own figures (its machine), and req/s measured here
    (this machine) with kiln in orange."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = cells(raw)
    written = []
    for t in report.tables:
        theirs = [(_label(r), r.figure) for r in t.rows if r.figure is not None]
        here: dict[str, float] = {}
        for row in t.rows:
            h = resolve(row, registered, measured, raw, unavailable)
            suffix = f", c={row.conns}" if row.conns else ""
            if h.cell is not None and h.cell.rps is not None:
                here[f"{h.server}{suffix}"] = h.cell.rps
            kiln = measured.get(row.workload, {}).get(row.kiln)
            if kiln is not None and kiln.rps is not None:
                here[f"{row.kiln}{suffix}"] = kiln.rps
        if not theirs and not here:
            continue
        height = 0.32 * max(len(theirs), len(here), 2) + 1.6
        fig, axes = plt.subplots(1, 2, figsize=(13, height))
        for ax, items, title in (
            (axes[0], theirs, f"the report's figures ({t.unit}, its machine)"),
            (axes[1], list(here.items()), "measured here (req/s, this machine)"),
        ):
            names = [n for n, _ in items][::-1]
            values = [v for _, v in items][::-1]
            colours = ["#d9531e" if n.startswith("kiln") else "#4a7ab5" for n in names]
            if names:
                ax.barh(names, values, color=colours if ax is axes[1] else "#999999")
                for i, v in enumerate(values):
                    ax.text(v, i, f" {v:,.0f}", va="center", fontsize=7)
            ax.set_title(title, fontsize=9)
            ax.tick_params(axis="y", labelsize=7)
            ax.margins(x=0.2)
        fig.suptitle(f"report {report.id}/{t.key}: {t.title}"[:120], fontsize=10)
        fig.tight_layout()
        name = chart_name(report, t)
        fig.savefig(out / name, dpi=100)
        plt.close(fig)
        written.append(name)
    return written
