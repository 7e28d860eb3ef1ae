#!/usr/bin/env bash
# The A/B of issue 26: kiln-demo at 9c41a12 (server `kiln-base`) against this checkout's (`kiln`),
# /pages/tour and /pong, alternating, 5 repetitions of 10 s, one worker pinned to CPU 0, wrk on CPU 1.
# Run on a quiet machine from the checkout to be measured (after the merge: main).
# Writes ab/ here: summary.md (paired ratios), baseline.md (kiln ÷ kiln-base CPU per request), raw.csv.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
# Built in release at 9c41a12 by the session that wrote this; without it bench/run builds the
# revision itself in bench/.build/kiln-base/ (a few minutes: fat LTO).
OLD=${OLD:-/work/wt/old-9c41a12/target/release/kiln-demo}
[ -x "$OLD" ] || OLD=9c41a12
rm -f /tmp/kiln-ab-wiki.sqlite*
bench/run --servers kiln,kiln-base --baseline "$OLD" --workloads wiki,pong \
  --reps 5 --duration 10 --warmup 2 --database sqlite:///tmp/kiln-ab-wiki.sqlite \
  --out bench/results/2026-11-25-wiki-regression/ab \
  --note "issue 26's A/B: kiln-demo at 9c41a12 (kiln-base) against this checkout (kiln); quiet machine"
# The same A/B in instructions per request (callgrind; the machine's load does not move it).
NEW=target/release/kiln-demo
(cd bench && python3 -m kilnbench.instructions "$([ -x "$OLD" ] && echo "$OLD" || echo .build/kiln-base/kiln-demo)" \
  "../$NEW" --path /pages/tour --path /pong) | tee bench/results/2026-11-25-wiki-regression/ab/instructions.txt
