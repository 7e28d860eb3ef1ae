#!/usr/bin/env bash
# Where PostgreSQL runs decides the database workloads on this two-core machine.
# For each server (pinned to CPU 0, one worker; wrk -t1 -c100 on CPU 1), ROUNDS
# rounds of two 3 s wrk runs on PATH: PostgreSQL's backend left to the scheduler,
# then pinned to CPU 1 beside wrk. Prints req/s of each run.
#   placement.sh PATH [ROUNDS]      needs KILN_PG_URL and the binaries bench/run builds
set -euo pipefail
path=$1 rounds=${2:-3} root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
port=$((20000 + RANDOM % 10000))
wrk_rps() { taskset -c 1 wrk -t1 -c100 -d3s --timeout 10s "http://127.0.0.1:$port$path" | awk '/Requests\/sec/{printf "%.0f", $2}'; }
for name in kiln actix-pg xitca-pg; do
  case $name in
  kiln) taskset -c 0 "$root/bench/.build/kiln/kiln-demo" --workers 1 --listen "127.0.0.1:$port" --access-log off --database "$KILN_PG_URL" >/dev/null 2>&1 & ;;
  *) PORT=$port DATABASE_URL=$KILN_PG_URL taskset -c 0 "$root/bench/.build/$name/release/peer-$name" >/dev/null 2>&1 & ;;
  esac
  pid=$!
  for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port$path" && break; sleep 0.2; done
  taskset -c 1 wrk -t1 -c100 -d1s "http://127.0.0.1:$port$path" >/dev/null
  backend=$(pgrep -f "postgres: benchmarkdbuser" | tail -1)
  free="" pinned=""
  for _ in $(seq "$rounds"); do
    taskset -pc 0,1 "$backend" >/dev/null; free+=" $(wrk_rps)"
    taskset -pc 1 "$backend" >/dev/null; pinned+=" $(wrk_rps)"
  done
  echo "$name $path  scheduler's choice:$free  PostgreSQL on CPU 1:$pinned"
  kill $pid; wait $pid 2>/dev/null || true
  sleep 0.5
done
