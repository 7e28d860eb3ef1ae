"""What one request span costs the kiln demo's subscriber alone: `bench/spancost`, N spans
created, entered, exited and closed under `tracing_subscriber::registry()` with the demo's
layers, counted by callgrind and timed (issue 25: how much of the 3 % budget the
subscriber takes by itself).

    cd bench && python3 -m kilnbench.spancost [--spans 10000] [--timed 1000000]

Instructions per span: callgrind counts only inside the program's `measure` loop, once
for N and once for 2N spans; the difference over N leaves out the warm-up and the first
span's one-time costs (the callsite's registration, the slab's first page). Per call into
the subscriber (new_span, enter, exit, try_close): their inclusive counts in the 2N run
over its spans. Time per span: the loop run natively on CPU 0, timed by the thread's
CPU time (a busy machine descheduling it does not count), median of `--runs`; still
moved by what shares the core's caches, where the instructions are not.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from .instructions import callgrind_total
from .servers import Step
from .sidecar import build, paths

MODES = ("recorded", "contextual", "unwanted", "empty")
"""`bench/spancost`'s modes: the span as kiln makes it (a root), the same with a contextual
parent, one the filter does not want, and the loop alone."""

CALLS = ("new_span", "enter", "exit", "try_close")
"""The subscriber's entry points a recorded span goes through."""

WARMUP_SPANS = 1_000
"""The program's own warm-up loop, counted by callgrind too (it runs `measure`)."""


def binary() -> Path:
    return paths().build / "spancost" / "release" / "spancost"


def build_steps() -> list[Step]:
    p = paths()
    manifest = p.bench / "spancost" / "Cargo.toml"
    return [Step(["cargo", "build", "--release", "--manifest-path", str(manifest), "--target-dir",
                  str(p.build / "spancost")], p.root)]  # fmt: skip


def callgrind(mode: str, spans: int, out: Path) -> int:
    """Instructions callgrind counted inside `measure` (warm-up included)."""
    argv = ["taskset", "-c", "0", "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
            "--toggle-collect=spancost::measure*", str(binary()), mode, str(spans)]  # fmt: skip
    subprocess.run(argv, check=True, capture_output=True, timeout=600)
    return callgrind_total(out.read_text(errors="replace"))


def per_call(dump: Path, spans: int) -> dict[str, float]:
    """Inclusive instructions per span of each subscriber entry point in `dump`."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no", "--threshold=100", str(dump)],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    found: dict[str, float] = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+\S+:<tracing_subscriber::layer::layered::Layered<L,S> as "
                     r"tracing_core::subscriber::Subscriber>::(\w+) \[", line)  # fmt: skip
        if m and m.group(2) in CALLS and m.group(2) not in found:
            found[m.group(2)] = int(m.group(1).replace(",", "")) / (spans + WARMUP_SPANS)
    return found


def timed(mode: str, spans: int, runs: int) -> float:
    """Median nanoseconds per span of `runs` native runs."""
    results = []
    for _ in range(runs):
        done = subprocess.run(["taskset", "-c", "0", str(binary()), mode, str(spans)], capture_output=True, text=True,
                              check=True, timeout=120)  # fmt: skip
        results.append(float(done.stdout.split()[0]))
    return statistics.median(results)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m kilnbench.spancost", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--spans", type=int, default=10_000, help="spans counted by callgrind (and twice as many)")
    parser.add_argument("--timed", type=int, default=1_000_000, help="spans per timed run")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per mode")
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args(argv)
    if not args.no_build:
        build(paths(), build_steps(), log=lambda line: print(line, file=sys.stderr))
    print("| mode | instructions per span | " + " | ".join(CALLS) + " | ns per span (timed) |")
    print("|---|---:|" + "---:|" * len(CALLS) + "---:|")
    with tempfile.TemporaryDirectory(prefix="kiln-spancost-") as tmp:
        for mode in MODES:
            once = callgrind(mode, args.spans, Path(tmp) / f"{mode}.1")
            twice_dump = Path(tmp) / f"{mode}.2"
            twice = callgrind(mode, 2 * args.spans, twice_dump)
            calls = per_call(twice_dump, 2 * args.spans)
            cells = " | ".join(f"{calls[c]:.0f}" if c in calls else "" for c in CALLS)
            ns = timed(mode, args.timed, args.runs)
            print(f"| {mode} | {(twice - once) / args.spans:.0f} | {cells} | {ns:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
