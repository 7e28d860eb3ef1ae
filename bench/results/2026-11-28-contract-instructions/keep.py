"""One binary under callgrind serving one path, as `kilnbench.instructions` counts it, but
with the dump kept in OUT for `callgrind_annotate` (per function, per line).

    cd bench && python3 results/2026-11-28-contract-instructions/keep.py BINARY OUT /pong PUBLIC
    callgrind_annotate --auto=yes OUT/callgrind.out.1

PUBLIC is the binary's own version of app/public (an older build refuses another's).
"""

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from kilnbench.instructions import free_port, measure  # noqa: E402

binary, out, path, public = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]
out.mkdir(parents=True, exist_ok=True)
with tempfile.TemporaryDirectory(prefix="kiln-keep-") as tmp:
    port = free_port()
    argv = [
        "taskset", "-c", "0", "valgrind", "--tool=callgrind", "--instr-atstart=no",
        f"--callgrind-out-file={out}/callgrind.out", binary, "--workers", "1", "--listen", f"127.0.0.1:{port}",
        "--access-log", "off", "--database", f"sqlite://{tmp}/db.sqlite", "--public", public,
    ]  # fmt: skip
    print(f"{measure(argv, binary, port, out, path, 300, 10, 50, ()):,.0f} instructions per request")
