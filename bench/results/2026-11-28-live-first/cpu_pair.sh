#!/usr/bin/env bash
# The first-page pair in CPU time rather than instructions: kiln-demo pinned to CPU 0
# with one worker, wrk pinned to CPU 1 (1 thread, 50 connections, 10 s), in turn on
# /bench/first/html, /bench/first/signed (the floor: html! + the token) and /bench/first/live, REPS times; the server's utime+stime from
# /proc over each run ÷ the requests wrk completed = CPU µs per request. Unlike callgrind,
# this runs SHA-256 on the CPU's own instructions (sha_ni), which valgrind 3.19 cannot.
# Usage: cpu_pair.sh KILN_DEMO_BINARY [REPS]   (from the checkout; bounded: REPS × 3 × 12 s)
set -euo pipefail
bin=$1; reps=${2:-3}; port=18931
db=$(mktemp -d)/first.sqlite
"$bin" --version >&2
taskset -c 0 "$bin" --workers 1 --listen 127.0.0.1:$port --access-log off --database "sqlite://$db" >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -fso /dev/null http://127.0.0.1:$port/bench/first/html && break; sleep 0.2; done
tick=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' /proc/$pid/stat; }
echo "rep,path,requests,cpu_ticks,cpu_us_per_request"
for rep in $(seq "$reps"); do
  for path in /bench/first/html /bench/first/signed /bench/first/live; do
    taskset -c 1 wrk -t1 -c50 -d2s http://127.0.0.1:$port$path >/dev/null   # warm-up
    before=$(cpu)
    out=$(taskset -c 1 wrk -t1 -c50 -d10s http://127.0.0.1:$port$path)
    after=$(cpu)
    n=$(echo "$out" | awk '/requests in/ {print $1}')
    non2xx=$(echo "$out" | awk '/Non-2xx/ {print $4}')
    [[ -z "$non2xx" ]] || { echo "non-2xx answers on $path: $non2xx" >&2; exit 1; }
    echo "$rep,$path,$n,$((after - before)),$(python3 -c "print(round(($after-$before)/$tick*1e6/$n, 2))")"
  done
done
