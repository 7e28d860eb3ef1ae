"""Large multipart uploads (issue 25): kiln's `Multipart` against axum's, one 100 MiB file at a time.

    cd bench && python3 -m kilnbench.upload                                        # 3 reps x 10 uploads of 100 MiB
    cd bench && python3 -m kilnbench.upload --size-mib 4 --reps 1 --uploads 2      # a smoke run, not a measurement

Both servers answer `POST /bench/upload` the same way: read the `multipart/form-data` body
field by field and piece by piece (`Field::chunk` in both), count the file field's bytes,
discard them, and answer the count as text. kiln-demo streams that route's body
(`App::stream_body`, 1 GiB limit); the axum peer (bench/peers/axum-upload) runs axum 0.8 on
a current-thread tokio runtime with a 1 GiB `DefaultBodyLimit`.

Each server is pinned to CPU 0 with one worker and curl to CPU 1, as in the main run; the
servers alternate per repetition. The body (one small text field, then the file) is made
once under `bench/.build/upload/`. Every upload is one `curl --data-binary @body` on a new
connection, with `Expect:` turned off so that neither server is timed waiting for curl's
`100 Continue` pause; its answer must equal the file's byte count.

Per upload the run records curl's wall time; the server's CPU time (utime + stime from
/proc/PID/stat, before and after, in 10 ms ticks; and, finer, the sum of its threads'
schedstat run time); its resident set before (VmRSS); its peak resident set during the
upload (VmHWM, reset before each upload through /proc/PID/clear_refs when the kernel
allows, else the peak since the server started); and peak minus before, what the upload
itself cost apart from what each server holds at rest (kiln-demo also carries the demo
site). Results go to `bench/results/<date>-upload/`: raw.csv, summary.md (medians,
kiln ÷ axum ratios), README.md, logs/.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from . import procfs
from .install import Missing, ensure_tool
from .load import LOAD_CPU
from .parse import ParseError
from .runner import Process, free_port, http_get
from .servers import Options, Paths, Server, cargo_peer, kiln

PATH = "/bench/upload"
BOUNDARY = "kilnbench-upload-4f9c2b7e1d"
"""Long and absent from the file's bytes (checked when the body is made)."""
SERVERS = ("kiln", "axum-upload")
READY_TIMEOUT_S = 60
BUILD_TIMEOUT_S = 1800
UPLOAD_TIMEOUT_S = 300
"""One upload; 100 MiB over loopback takes well under a second on any machine that runs this."""
CURL_REPORT = "\n%{http_code} %{time_total} %{size_upload}\n"
"""What curl prints after the answer's body: status, seconds, bytes sent."""


@dataclass(frozen=True)
class Body:
    """The multipart body on disk: its path, Content-Type and how many bytes the file field holds."""

    path: Path
    content_type: str
    file_bytes: int


def body_bytes(file_bytes: int, boundary: str = BOUNDARY) -> tuple[bytes, bytes]:
    """The form's bytes before and after the file's data: a text field `note`, the file field's
    head, and after the data the closing delimiter (RFC 7578 over RFC 2046 section 5.1.1)."""
    head = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n"
        f"{file_bytes} bytes follow\r\n"
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"upload.bin\"\r\n"
        f"Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    return head, tail


def make_body(directory: Path, size_mib: int, boundary: str = BOUNDARY) -> Body:
    """Writes (once per size) a body whose file field holds `size_mib` MiB of fixed pseudo-random bytes."""
    file_bytes = size_mib * 1024 * 1024
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"body-{size_mib}mib"
    head, tail = body_bytes(file_bytes, boundary)
    block = random.Random(25).randbytes(1024 * 1024)
    # Repeated blocks: the delimiter must not appear inside one, nor across two.
    if f"--{boundary}".encode() in block + block:
        raise ValueError("the boundary occurs in the data")
    if not path.exists() or path.stat().st_size != len(head) + file_bytes + len(tail):
        partial = path.with_suffix(".partial")
        with open(partial, "wb") as f:
            f.write(head)
            for _ in range(size_mib):
                f.write(block)
            f.write(tail)
        partial.replace(path)
    return Body(path, f"multipart/form-data; boundary={boundary}", file_bytes)


@dataclass(frozen=True)
class CurlResult:
    status: int
    seconds: float
    uploaded: int
    answer: str


def parse_curl(output: str) -> CurlResult:
    """curl's stdout with `-w CURL_REPORT`: the answer's body, then `status seconds bytes-sent`."""
    answer, sep, report = output.rstrip("\n").rpartition("\n")
    fields = report.split()
    if not sep or len(fields) != 3:
        raise ParseError(f"no curl report in: {output[-200:]!r}")
    try:
        return CurlResult(int(fields[0]), float(fields[1]), int(float(fields[2])), answer.strip())
    except ValueError as e:
        raise ParseError(f"bad curl report {report!r}: {e}") from e


def curl_command(port: int, body: Body) -> list[str]:
    return ["taskset", "-c", LOAD_CPU, "curl", "-sS", "--max-time", str(UPLOAD_TIMEOUT_S),
            "-H", f"Content-Type: {body.content_type}", "-H", "Expect:",
            "--data-binary", f"@{body.path}", "-w", CURL_REPORT, f"http://127.0.0.1:{port}{PATH}"]  # fmt: skip


def parse_schedstat(text: str) -> int:
    """Nanoseconds on CPU from one /proc/PID/task/TID/schedstat line (`run_ns wait_ns slices`)."""
    try:
        return int(text.split()[0])
    except (IndexError, ValueError) as e:
        raise ParseError(f"bad schedstat {text!r}") from e


def sched_cpu_seconds(pid: int) -> float:
    """CPU time of the process's live threads from schedstat, in nanoseconds where /proc/PID/stat
    counts 10 ms ticks: a second figure for uploads that take only a few ticks."""
    total = 0
    for task in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += parse_schedstat(task.read_text())
        except (OSError, ParseError):
            continue
    return total / 1e9


def reset_peak_rss(pid: int) -> bool:
    """Resets the process's VmHWM to its current RSS (`5` to clear_refs, Linux 4.0+); False if refused."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def upload(process: Process, body: Body) -> dict:
    """One upload, measured: the row's figures, or `status` saying what went wrong."""
    pid = process.pid
    reset = reset_peak_rss(pid)
    rss_before = procfs.rss_kb(pid)
    cpu_before = procfs.cpu_seconds(pid)
    sched_before = sched_cpu_seconds(pid)
    started = time.monotonic()
    command = curl_command(process.port, body)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=UPLOAD_TIMEOUT_S + 10, check=False)
    except subprocess.TimeoutExpired:
        return {"status": "curl timed out"}
    elapsed = time.monotonic() - started
    cpu = procfs.cpu_seconds(pid) - cpu_before
    sched = sched_cpu_seconds(pid) - sched_before
    peak = procfs.hwm_kb(pid)
    row = {"rss_before_kb": rss_before, "peak_rss_kb": peak, "rss_growth_kb": peak - rss_before, "peak_reset": reset,
           "server_cpu_s": round(cpu, 4), "server_cpu_sched_s": round(sched, 5), "elapsed_s": round(elapsed, 4)}  # fmt: skip
    try:
        result = parse_curl(done.stdout)
    except ParseError as e:
        return {**row, "status": f"curl exited {done.returncode}: {done.stderr.strip()[-200:]} {e}"}
    row.update(http_status=result.status, wall_s=round(result.seconds, 4), uploaded=result.uploaded, answer=result.answer)
    if result.status != 200 or result.answer != str(body.file_bytes):
        return {**row, "status": f"HTTP {result.status}, answered {result.answer[:80]!r}, expected {body.file_bytes}"}
    row["mib_per_s"] = round(body.file_bytes / 2**20 / max(result.seconds, 1e-9), 1)
    return {**row, "status": "ok"}


def wait_ready(process: Process) -> str | None:
    """None once `GET /bench/upload` answers 200, else why not."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.popen.poll() is not None:
            return f"exited with status {process.popen.returncode}: {process.log_tail()}"
        try:
            if http_get(process.port, PATH, timeout_s=2)[0] == 200:
                return None
        except Exception:  # not listening yet, or a half-started server
            pass
        time.sleep(0.1)
    return f"no 200 on GET {PATH} within {READY_TIMEOUT_S}s"


def servers() -> list[Server]:
    axum = cargo_peer("axum-upload", "peer-axum-upload", "axum", "axum 0.8 Multipart, current-thread tokio, 1 GiB body limit")
    return [kiln("kiln", access_log=False), axum]


FIGURES = ("wall_s", "mib_per_s", "server_cpu_s", "server_cpu_sched_s", "peak_rss_kb", "rss_before_kb", "rss_growth_kb")


def summarise(rows: list[dict]) -> str:
    """Medians per server over its good uploads, and kiln ÷ axum for each (lower is better for
    kiln except MiB/s); the goal of issue 25 is wall and peak RSS ratios at most 1."""
    medians: dict[str, dict[str, float]] = {}
    counts: dict[str, tuple[int, int]] = {}
    for server in SERVERS:
        mine = [r for r in rows if r["server"] == server]
        good = [r for r in mine if r["status"] == "ok"]
        counts[server] = (len(good), len(mine))
        if good:
            medians[server] = {f: statistics.median(float(r[f]) for r in good) for f in FIGURES}
    lines = ["| server | good uploads | wall s | MiB/s | server CPU s | CPU s (schedstat) | peak RSS MiB | RSS before MiB | peak − before MiB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for server in SERVERS:
        good, total = counts[server]
        m = medians.get(server)
        if m is None:
            lines.append(f"| {server} | {good}/{total} | | | | | | | |")
            continue
        lines.append(f"| {server} | {good}/{total} | {m['wall_s']:.3f} | {m['mib_per_s']:.0f} | {m['server_cpu_s']:.3f} | "
                     f"{m['server_cpu_sched_s']:.3f} | {m['peak_rss_kb'] / 1024:.1f} | {m['rss_before_kb'] / 1024:.1f} | {m['rss_growth_kb'] / 1024:.1f} |")  # fmt: skip
    k, a = medians.get("kiln"), medians.get("axum-upload")
    if k and a:
        lines += ["", "| kiln ÷ axum | ratio |", "|---|---:|"]
        for f, label in (("wall_s", "wall time"), ("server_cpu_s", "server CPU"), ("server_cpu_sched_s", "server CPU (schedstat)"),
                         ("peak_rss_kb", "peak RSS"),
                         ("rss_before_kb", "RSS before"), ("rss_growth_kb", "peak − before"), ("mib_per_s", "MiB/s")):  # fmt: skip
            lines.append(f"| {label} | {k[f] / a[f]:.2f} |" if a[f] else f"| {label} | |")
    return "\n".join(lines) + "\n"


def build(paths: Paths, entries: list[Server]) -> None:
    for step in [step for server in entries for step in server.build(paths)]:
        print(f"$ {' '.join(step.argv)}", flush=True)
        subprocess.run(step.argv, cwd=step.cwd, env=os.environ | step.env, check=True, timeout=BUILD_TIMEOUT_S)


FIELDS = ["server", "rep", "upload", "status", "http_status", "wall_s", "elapsed_s", "mib_per_s", "server_cpu_s",
          "server_cpu_sched_s", "rss_before_kb", "peak_rss_kb", "rss_growth_kb", "peak_reset", "uploaded", "answer"]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m kilnbench.upload", description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=100, help="the file field's size")
    parser.add_argument("--reps", type=int, default=3, help="repetitions, the servers alternating")
    parser.add_argument("--uploads", type=int, default=10, help="measured uploads per server per repetition")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured uploads after each start")
    parser.add_argument("--servers", default=",".join(SERVERS))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-build", action="store_true", help="use the binaries already in bench/.build")
    args = parser.parse_args(argv)
    paths = Paths(Path(__file__).resolve().parents[2])
    out = args.out or paths.bench / "results" / f"{date.today().isoformat()}-upload"
    try:
        ensure_tool("curl", "curl")
        ensure_tool("taskset", "util-linux")
    except Missing as e:
        print(f"kilnbench.upload: {e}", file=sys.stderr)
        return 2
    wanted = args.servers.split(",")
    entries = [s for s in servers() if s.name in wanted]
    if not args.no_build:
        build(paths, entries)
    body = make_body(paths.build / "upload", args.size_mib)
    out.mkdir(parents=True, exist_ok=True)
    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    rows: list[dict] = []
    for rep in range(args.reps):
        for server in entries[rep % len(entries):] + entries[: rep % len(entries)]:
            port = free_port()
            process = Process(server, server.launch(paths, port, Options()), port, logs / f"{server.name}.log")
            try:
                why = wait_ready(process)
                if why:
                    rows.append({"server": server.name, "rep": rep, "upload": 0, "status": why})
                    print(f"rep {rep} {server.name}: {why}", flush=True)
                    continue
                for _ in range(args.warmup):
                    upload(process, body)
                for n in range(args.uploads):
                    row = {"server": server.name, "rep": rep, "upload": n, **upload(process, body)}
                    rows.append(row)
                    print(f"rep {rep} {server.name:12} upload {n}: {row['status']}  wall {row.get('wall_s', '-')} s  "
                          f"CPU {row.get('server_cpu_s', '-')} s  peak RSS {row.get('peak_rss_kb', 0) / 1024:.1f} MiB",
                          flush=True)  # fmt: skip
            finally:
                process.stop()
    with open(out / "raw.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    summary = summarise(rows)
    (out / "summary.md").write_text(summary)
    versions = "\n".join(f"- {s.name}: {s.version(paths)}" for s in entries)
    curl = subprocess.run(["curl", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    kernel = subprocess.run(["uname", "-r"], capture_output=True, text=True).stdout.strip()
    command = "python3 -m kilnbench.upload " + " ".join(sys.argv[1:] if argv is None else argv)
    (out / "README.md").write_text(
        f"# Upload run {date.today().isoformat()} (issue 25)\n\n`cd bench && {command}`\n\n"
        f"{args.size_mib} MiB file field in a multipart body of {body.path.stat().st_size} bytes; "
        f"{args.reps} repetitions × {args.uploads} uploads per server ({args.warmup} unmeasured after each start).\n\n"
        f"Machine: {os.cpu_count()} CPUs, Linux {kernel}, {curl}, {shutil.which('curl')}\n\n"
        f"Servers:\n{versions}\n\n{summary}"
    )
    print(summary)
    bad = [r for r in rows if r["status"] != "ok"]
    return 1 if bad or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
