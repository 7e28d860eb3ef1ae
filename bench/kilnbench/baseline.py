"""`kiln-base`: an earlier kiln-demo run beside this checkout's, so that a change that makes
a request dearer shows in the run of that change (the A/B of two kilns).

`bench/run --baseline REV_OR_BINARY` names it: a kiln-demo binary file (copied, so that a
rebuild cannot swap it mid-run), or a git revision (`HEAD~1`, the default), checked out in
`bench/.build/kiln-base/src` and built there in release, with a target folder kept between
runs. The run then prints, per workload, kiln's server CPU per request against kiln-base's,
paired within each repetition, and flags a difference past `THRESHOLD`; `baseline.md` in the
result folder keeps the table.

    python3 -m kilnbench.baseline checkout REV DIR   # the build step: DIR at REV, a worktree
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .report import MEASURED, paired_ratios
from .servers import Launch, Options, Paths, Server, Step, _first_line, _output, is_postgres

NAME = "kiln-base"
ENV = "KILN_BENCH_BASELINE"
"""Where `--baseline` reaches the build step: a registry entry is built from `Paths` alone."""
DEFAULT = "HEAD~1"
THRESHOLD = 0.03
"""A change costing more than this share of CPU per request is called a regression."""


def _dir(paths: Paths) -> Path:
    return paths.build / NAME


def _binary(paths: Paths) -> Path:
    return _dir(paths) / "kiln-demo"


def spec() -> str:
    """What `--baseline` named: a binary file or a git revision."""
    return os.environ.get(ENV) or DEFAULT


def build(paths: Paths) -> list[Step]:
    base = spec()
    _dir(paths).mkdir(parents=True, exist_ok=True)
    if Path(base).is_file():
        return [Step(["cp", str(Path(base).resolve()), str(_binary(paths))], paths.root)]
    src, target = _dir(paths) / "src", _dir(paths) / "target"
    return [
        Step([sys.executable, "-m", "kilnbench.baseline", "checkout", base, str(src)], paths.bench),
        Step(["cargo", "build", "--release", "-p", "kiln-demo"], src, {"CARGO_TARGET_DIR": str(target)}),
        Step(["cp", str(target / "release" / "kiln-demo"), str(_binary(paths))], paths.root),
    ]


def launch(paths: Paths, port: int, opts: Options) -> Launch:
    argv = [str(_binary(paths)), "--workers", "1", "--listen", f"127.0.0.1:{port}", "--access-log", "off"]
    if is_postgres(opts.database_url):
        argv += ["--database", opts.database_url]
        return Launch(argv, cwd=paths.root)
    # A SQLite file of its own, seeded at start as kiln's is: an older binary refuses a file
    # that a newer one has migrated further.
    db = _dir(paths) / "kiln-base.sqlite"
    argv += ["--database", f"sqlite://{db}"]
    return Launch(argv, cwd=paths.root, cleanup=(db, Path(f"{db}-wal"), Path(f"{db}-shm")))


def version(paths: Paths) -> str:
    base = spec()
    if Path(base).is_file():
        where = f"binary {base}"
    else:
        rev = _first_line(["git", "rev-parse", "--short", "HEAD"], _dir(paths) / "src")
        where = f"git {rev} ({base})"
    return f"{_first_line([str(_binary(paths)), '--version'])}, {where}"


def server() -> Server:
    return Server(
        NAME,
        "kiln-demo as it was (`--baseline`, default HEAD~1), access log off: the A/B against this checkout's",
        build,
        launch,
        version,
        tools={"cargo": "cargo", "git": "git"},
    )


SERVERS = [server()]


def checkout(rev: str, where: Path) -> int:
    """`where` as a detached worktree at `rev` of the repository this file is in."""
    repo = Path(__file__).resolve().parents[2]
    commit = _output(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], repo).splitlines()
    if not commit or len(commit[-1]) != 40:
        print(f"kilnbench.baseline: {rev}: not a commit of {repo}", file=sys.stderr)
        return 1
    if (where / ".git").exists():
        args = ["git", "-C", str(where), "checkout", "--detach", "--force", commit[-1]]
    else:
        args = ["git", "-C", str(repo), "worktree", "add", "--detach", "--force", str(where), commit[-1]]
    return subprocess.run(args, check=False).returncode


# ---------------------------------------------------------------- the verdict


def compare(rows: list[dict], threshold: float = THRESHOLD) -> list[tuple[str, float, int, bool]]:
    """Per workload both kilns ran: (workload, kiln's CPU per request ÷ kiln-base's, the
    median of the per-repetition ratios; pairs; whether it is past `threshold`)."""
    workloads = dict.fromkeys(r["workload"] for r in rows if r["server"] == NAME and r["status"] == MEASURED)
    found = []
    for workload in workloads:
        _, base_over_kiln, pairs = paired_ratios(rows, workload).get(NAME, (None, None, 0))
        if base_over_kiln:
            ratio = 1 / base_over_kiln
            found.append((workload, ratio, pairs, ratio > 1 + threshold))
    return found


def table(found: list[tuple[str, float, int, bool]], threshold: float = THRESHOLD) -> list[str]:
    """`compare`'s result as markdown."""
    lines = [
        f"| workload | kiln ÷ {NAME}, CPU per request | pairs | verdict |",
        "|---|--:|--:|---|",
    ]
    for workload, ratio, pairs, worse in found:
        verdict = f"**regression** (> {1 + threshold:.2f})" if worse else "ok"
        lines.append(f"| {workload} | {ratio:.3f} | {pairs} | {verdict} |")
    return lines


def write(out: Path, rows: list[dict], base: str) -> list[str]:
    """Writes `baseline.md` and returns one line per regression, for the run to print."""
    found = compare(rows)
    if not found:
        return []
    text = [
        f"# kiln against {NAME} ({base})",
        "",
        "Server CPU time per request, kiln ÷ kiln-base, the median of the ratios taken within each",
        f"repetition (the two ran seconds apart). Above {1 + THRESHOLD:.2f} the change costs more than",
        f"{THRESHOLD:.0%} per request; on a shared machine, run it again before believing a small one.",
        "",
        *table(found),
        "",
    ]
    (out / "baseline.md").write_text("\n".join(text))
    return [
        f"kiln takes {ratio - 1:.1%} more CPU per request than {NAME} ({base}) on {workload} ({pairs} pairs)"
        for workload, ratio, pairs, worse in found
        if worse
    ]


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "checkout":
        return checkout(argv[1], Path(argv[2]))
    print("usage: python3 -m kilnbench.baseline checkout REV DIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
