"""kilnbench: kiln's side-by-side benchmark suite.

The map of the package:

- `cli`       — the command line of `bench/run`
- `runner`    — builds, starts, probes, drives and stops each server, rep by rep
- `servers`   — the registry: kiln and every peer (one entry per server)
- `workloads` — the registry of workloads and how each probes its endpoint
- `load`      — runs wrk, ab, httperf and the idle-connections client, bounded in time
- `parse`     — turns wrk, ab and httperf output into numbers
- `procfs`    — a server's resident memory and CPU time from /proc
- `idle`      — the client that holds 10,000 idle keep-alive connections
- `install`   — fetches a missing tool (apt-get, pip) before it is needed
- `report`    — raw.csv, summary.md, README.md and the PNG charts of a run
"""
