"""A server's memory and CPU time, read from /proc.

A server may be a process tree (nginx: a master and its worker), so every
figure is summed over the process and all its descendants.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    task_dir = Path(f"/proc/{pid}/task")
    try:
        for task in task_dir.iterdir():
            kids += [int(c) for c in (task / "children").read_text().split()]
    except OSError:
        pass
    return kids


def process_tree(pid: int) -> list[int]:
    """The pid and all its live descendants."""
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo += _children(p)
    return tree


def _status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_kb(pid: int) -> int:
    """Resident set (VmRSS) of the tree, in KiB."""
    return sum(_status_kb(p, "VmRSS") for p in process_tree(pid))


def hwm_kb(pid: int) -> int:
    """Peak resident set (VmHWM) of the tree since each process started, in KiB."""
    return sum(_status_kb(p, "VmHWM") for p in process_tree(pid))


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of the tree so far, children that have exited included.

    A child that exits leaves the tree, and its time moves to its parent's `cutime` and
    `cstime` once the parent reaps it: counting only live processes' own time, a server
    that forks a process per request (CGI) or recycles its workers (Apache) seemed to
    spend less CPU at the end of a run than at its start."""
    return sum(cpu_times(pid))


def cpu_times(pid: int) -> tuple[float, float]:
    """User and system CPU time of the tree so far (as `cpu_seconds`, kept apart)."""
    user = system = 0
    for p in process_tree(pid):
        try:
            stat = Path(f"/proc/{p}/stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces; the fields after its ")" are fixed.
        fields = [int(f) for f in stat.rsplit(")", 1)[1].split()[11:15]]  # utime, stime, cutime, cstime
        user += fields[0] + fields[2]
        system += fields[1] + fields[3]
    return user / _CLOCK_TICKS, system / _CLOCK_TICKS


class RssSampler:
    """Samples the tree's VmRSS on a thread while a load runs; `peak_kb` is the maximum seen."""

    def __init__(self, pid: int, interval_s: float = 0.1):
        self.pid = pid
        self.interval_s = interval_s
        self.peak_kb = rss_kb(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.peak_kb = max(self.peak_kb, rss_kb(self.pid))

    def __enter__(self) -> "RssSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_kb = max(self.peak_kb, rss_kb(self.pid))
