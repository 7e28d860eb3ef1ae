#!/usr/bin/env bash
# The wiki page against its peers (issue 26: kiln's server CPU per page at least 1.3x better than
# axum-wiki's and actix-wiki's): kiln, axum-wiki and actix-wiki alternating, 5 repetitions of 10 s,
# the ratios paired within each repetition; wiki-views first on each fresh server gives the idle RSS
# (after one probe request) and the RSS after 10,000 views. Quiet machine; from the checkout to measure.
# Writes peers/ here. The peers build into bench/.build/ (release, fat LTO: minutes the first time;
# /work/wt/wiki-perf/bench/.build/{axum-wiki,actix-wiki} hold builds of the same sources).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
rm -f /tmp/kiln-wiki-peers.sqlite*
bench/run --servers kiln,axum-wiki,actix-wiki --workloads wiki-views,wiki \
  --reps 5 --duration 10 --warmup 2 --database sqlite:///tmp/kiln-wiki-peers.sqlite \
  --out bench/results/2026-11-25-wiki-regression/peers \
  --note "issue 26: the wiki page against axum-wiki and actix-wiki after the fix; quiet machine"
