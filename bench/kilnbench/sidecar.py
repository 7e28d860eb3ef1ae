"""What the side runs share (`kilnbench.h2`, `kilnbench.compress`, `kilnbench.sse`): each
runs its own few servers alternately, pinned as the main run pins them, and writes
`bench/results/<date>-<name>/` with raw.csv, summary.md and README.md.

A side run exists where the main runner's model (one HTTP/1.1 port per server, one row
shape) does not fit: h2c-only listeners, TLS, extra request headers, a custom client.
"""

from __future__ import annotations

import csv
import http.client
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Callable

from .runner import BUILD_TIMEOUT_S, START_TIMEOUT_S, Process, http_get
from .servers import Launch, Paths, Server, Step

Probe = Callable[[int], "str | None"]
"""Given a port: None once the server answers as it should, else what is wrong so far."""


def paths() -> Paths:
    """The checkout this package lives in."""
    return Paths(Path(__file__).resolve().parents[2])


def results_dir(p: Paths, name: str, out: Path | None) -> Path:
    """`out`, or `bench/results/<today>-<name>/`, created."""
    folder = out or p.bench / "results" / f"{date.today().isoformat()}-{name}"
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    return folder


def raise_fd_limit(needed: int) -> None:
    """Raises this process's RLIMIT_NOFILE (which servers and clients started from it inherit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))


def build(p: Paths, steps: list[Step], log: Callable[[str], None] = print) -> None:
    """Runs every build step in order; raises CalledProcessError on the first that fails."""
    for step in steps:
        log(f"$ {' '.join(step.argv)}")
        subprocess.run(step.argv, cwd=step.cwd, env=os.environ | step.env, check=True, timeout=BUILD_TIMEOUT_S)


@dataclass
class Started:
    """A server started for a side run, and why it is not answering if it is not."""

    process: Process
    failure: str | None = None


def start(server: Server, launch: Launch, port: int, log_path: Path, probe: Probe) -> Started:
    """Starts `launch` pinned to the server CPU and waits (bounded) until `probe` passes."""
    process = Process(server, launch, port, log_path)
    deadline = time.monotonic() + START_TIMEOUT_S
    why: str | None = "never probed"
    while time.monotonic() < deadline:
        if process.popen.poll() is not None:
            return Started(process, f"exited with status {process.popen.returncode}: {process.log_tail()}")
        why = probe(port)
        if why is None:
            return Started(process)
        time.sleep(0.2)
    return Started(process, f"not ready within {START_TIMEOUT_S}s: {why}")


@dataclass
class Results:
    """Rows of one side run, written as the suite writes every run."""

    name: str
    fields: list[str]
    rows: list[dict[str, object]] = field(default_factory=list)

    def add(self, row: dict[str, object]) -> None:
        self.rows.append(row)

    def write(self, out: Path, summary: str, versions: dict[str, str], argv: list[str], notes: str = "") -> None:
        with open(out / "raw.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self.fields, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(self.rows)
        (out / "summary.md").write_text(summary)
        uname = subprocess.run(["uname", "-r"], capture_output=True, text=True, check=False).stdout.strip()
        load = " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"
        listed = "\n".join(f"- {name}: {version}" for name, version in versions.items())
        command = f"cd bench && python3 -m kilnbench.{self.name} {' '.join(argv)}".rstrip()
        (out / "README.md").write_text(
            f"# {self.name} run {date.today().isoformat()}\n\n`{command}`\n\n"
            f"Machine: {os.cpu_count()} CPUs, kernel {uname}, load average {load} at the end; "
            f"servers on CPU 0, the load on CPU 1.\n\n{notes}\n\nServers:\n{listed}\n\n{summary}"
        )


def kiln_failed(rows: list[dict[str, object]], servers: list[str]) -> bool:
    """Whether kiln was run and a row of its did not measure: a side run's exit status 1."""
    return "kiln" in servers and any(r["server"] == "kiln" and r["status"] != "ok" for r in rows)


def median_of(rows: list[dict[str, object]], key: str) -> float | None:
    """The median of `key` over the rows that have a number there."""
    values = [float(r[key]) for r in rows if isinstance(r.get(key), (int, float))]
    return statistics.median(values) if values else None


def need(executable: str) -> str | None:
    """Where `executable` is, or None."""
    return shutil.which(executable) or shutil.which(executable, path="/usr/sbin:/sbin")


def quietly(probe: Probe) -> Probe:
    """`probe`, with a refused or reset connection (or a garbled answer) meaning "not yet"."""

    def wrapped(port: int) -> str | None:
        try:
            return probe(port)
        except (OSError, http.client.HTTPException) as e:
            return str(e) or type(e).__name__

    return wrapped


def answers_200(path: str) -> Probe:
    """A probe passing once `GET path` over HTTP/1.1 answers 200."""

    def probe(port: int) -> str | None:
        status = http_get(port, path, timeout_s=2)[0]
        return None if status == 200 else f"GET {path}: {status}"

    return quietly(probe)


def first_line(argv: list[str]) -> str:
    """The first line a command prints on stdout or stderr (a version), or "unknown"."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = (done.stdout + done.stderr).strip().splitlines()
    return lines[0] if lines else "unknown"


def argv_of(argv: list[str] | None) -> list[str]:
    """The command line a `main(argv)` was given."""
    return sys.argv[1:] if argv is None else argv
