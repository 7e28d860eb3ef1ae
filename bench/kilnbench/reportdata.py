"""The five reports' own tables, as committed in bench/reports/NNN.toml.

A row holds what the report printed: the system, its figure (a number, or the report's words
when it gave none, e.g. "figure not found" or "failed: ..."), the unit, the RSS where the report
gave it, and where it was read. `peers` names the registry entries that reproduce the system
here (the first one registered is used); `kiln` names the kiln variant it is compared with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .workloads import mix_name

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

REPORTS_DIR = Path(__file__).resolve().parents[1] / "reports"
REPORT_IDS = ("000", "001", "002", "003", "004")
NOT_FOUND = "figure not found"


@dataclass(frozen=True)
class Row:
    """One row of a report's table, and what reproduces it here."""

    system: str
    workload: str
    figure: float | None
    """The report's number, None when it printed none (see `figure_text`)."""
    figure_text: str
    """The figure as the report wrote it ("2100+", "failed: ...", "figure not found")."""
    unit: str
    source: str
    peers: tuple[str, ...] = ()
    kiln: str = "kiln"
    why: str = ""
    """Why no peer reproduces it, when `peers` is empty."""
    note: str = ""
    rss_mb: float | None = None
    rss_text: str = ""
    failed: int | None = None
    """The report's count of failed requests, where it gave one."""
    conns: int | None = None
    """For the mix table: the concurrency of this cell."""


@dataclass(frozen=True)
class Table:
    key: str
    title: str
    unit: str
    rows: tuple[Row, ...]
    rss: bool = False


@dataclass(frozen=True)
class Report:
    id: str
    title: str
    source: str
    machine: str
    tool: str
    reproduced_with: str
    tables: tuple[Table, ...]
    also: tuple[str, ...] = field(default_factory=tuple)

    @property
    def workloads(self) -> list[str]:
        """Every workload the report's rows need, in order, each once."""
        return list(dict.fromkeys(r.workload for t in self.tables for r in t.rows))

    @property
    def peers(self) -> list[str]:
        """Every server any row names (peers and kiln variants), in order, each once."""
        names = [n for t in self.tables for r in t.rows for n in (r.kiln, *r.peers)]
        return list(dict.fromkeys(names))


def _figure(value: object) -> tuple[float | None, str]:
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value), f"{value:,}"
    if isinstance(value, float):
        return value, f"{value:,.2f}"
    if isinstance(value, str) and value:
        return None, value
    raise ValueError(f"a figure is a number or the report's words, not {value!r}")


def _row(raw: dict, table: dict, report: dict, workload: str, figure: object, conns: int | None = None) -> Row:
    number, text = _figure(figure)
    rss = raw.get("rss_mb")
    return Row(
        system=raw["system"],
        workload=workload,
        figure=number,
        figure_text=raw.get("figure_text", text) if conns is None else text,
        unit=raw.get("unit", table["unit"]),
        source=raw.get("source", table.get("source", report["source"])),
        peers=tuple(raw.get("peers", ())),
        kiln=raw.get("kiln", "kiln"),
        why=raw.get("why", ""),
        note=raw.get("note", ""),
        rss_mb=None if rss is None else float(rss),
        rss_text="" if rss is None else ("~" if raw.get("rss_approx") else "") + f"{rss}MB",
        failed=raw.get("failed"),
        conns=conns,
    )


def _rows(table: dict, report: dict) -> list[Row]:
    rows = []
    for raw in table["rows"]:
        if "figures" in raw:  # the mix table: one figure per concurrency
            conns = table["conns"]
            if len(raw["figures"]) != len(conns):
                raise ValueError(f"{raw['system']}: {len(raw['figures'])} figures for {len(conns)} concurrencies")
            for n, figure in zip(conns, raw["figures"]):
                rows.append(_row(raw, table, report, mix_name(raw["mode"], raw["every"], n), figure, n))
        else:
            rows.append(_row(raw, table, report, raw.get("workload", table.get("workload", "")), raw["figure"]))
    return rows


def parse(text: str) -> Report:
    raw = tomllib.loads(text)
    tables = tuple(
        Table(t["key"], t["title"], t["unit"], tuple(_rows(t, raw)), bool(t.get("rss"))) for t in raw["tables"]
    )
    return Report(
        id=raw["id"],
        title=raw["title"],
        source=raw["source"],
        machine=raw.get("machine", ""),
        tool=raw.get("tool", ""),
        reproduced_with=raw.get("reproduced_with", ""),
        tables=tables,
        also=tuple(raw.get("also", ())),
    )


def load(report_id: str, folder: Path = REPORTS_DIR) -> Report:
    return parse((folder / f"{report_id}.toml").read_text())


def load_all(folder: Path = REPORTS_DIR) -> list[Report]:
    return [load(i, folder) for i in REPORT_IDS]
