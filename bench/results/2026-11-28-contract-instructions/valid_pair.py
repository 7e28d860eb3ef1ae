"""Instructions per request of the demo's two validation routes (app/src/bench_validate.rs),
one binary: `kiln::Valid<Query<Signup>>` on /bench/valid, `Query<Signup>` and garde's
`validate()` in the handler on /bench/validate-by-hand; each twice, alternating.

    cd bench && python3 results/2026-11-28-contract-instructions/valid_pair.py target/release/kiln-demo
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from kilnbench.instructions import count  # noqa: E402

binary = Path(sys.argv[1])
query = "name=ada&age=36&email=ada@example.org"
for path in (f"/bench/validate-by-hand?{query}", f"/bench/valid?{query}") * 2:
    print(f"{path}: {count(binary, path, 300, 10, 50):,.0f} instructions per request", flush=True)
