#!/usr/bin/env bash
# Where each request's CPU goes on this two-core machine, with PostgreSQL's backend pinned
# beside the server (CPU 0) or beside wrk (CPU 1). For each server (pinned to CPU 0, one
# worker) and each placement: a 1 s warm-up, then a counted `wrk -t1 -c100 -d5s` on CPU 1.
# Prints req/s, the server's and the backend's CPU µs per request (utime + stime from /proc),
# and how busy each core was (/proc/stat).
#   cores.sh PATH [ROUNDS]      needs KILN_PG_URL and the binaries bench/run builds
set -euo pipefail
path=$1 rounds=${2:-1} root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
port=$((20000 + RANDOM % 10000))
hz=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tree_ticks() { local s=0 t; for t in /proc/$1/task/*; do s=$((s + $(awk '{print $14 + $15}' "$t/stat"))); done; echo $s; }
core() { awk -v c="cpu$1" '$1 == c {print $2 + $3 + $4 + $7 + $8, $5 + $6}' /proc/stat; }
for name in kiln actix-pg xitca-pg; do
  case $name in
  kiln) taskset -c 0 "$root/bench/.build/kiln/kiln-demo" --workers 1 --listen "127.0.0.1:$port" --access-log off --database "$KILN_PG_URL" >/dev/null 2>&1 & ;;
  *) PORT=$port DATABASE_URL=$KILN_PG_URL taskset -c 0 "$root/bench/.build/$name/release/peer-$name" >/dev/null 2>&1 & ;;
  esac
  pid=$!
  for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port$path" && break; sleep 0.2; done
  backends=$(pgrep -f "postgres: benchmarkdbuser")
  for _ in $(seq "$rounds"); do
    for cpu in 0 1; do
      for b in $backends; do taskset -pc $cpu "$b" >/dev/null; done
      taskset -c 1 wrk -t1 -c100 -d1s "http://127.0.0.1:$port$path" >/dev/null
      s0=$(tree_ticks $pid) p0=0; for b in $backends; do p0=$((p0 + $(ticks "$b"))); done
      read -r busy0 idle0 <<<"$(core 0)"; read -r busy1 idle1 <<<"$(core 1)"
      out=$(taskset -c 1 wrk -t1 -c100 -d5s --timeout 10s "http://127.0.0.1:$port$path")
      s1=$(tree_ticks $pid) p1=0; for b in $backends; do p1=$((p1 + $(ticks "$b"))); done
      read -r busy0b idle0b <<<"$(core 0)"; read -r busy1b idle1b <<<"$(core 1)"
      n=$(awk '/requests in/ {print $1}' <<<"$out")
      rps=$(awk '/Requests\/sec/ {printf "%.0f", $2}' <<<"$out")
      awk -v name=$name -v cpu=$cpu -v rps=$rps -v n=$n -v hz=$hz -v s=$((s1 - s0)) -v p=$((p1 - p0)) \
        -v b0=$((busy0b - busy0)) -v i0=$((idle0b - idle0)) -v b1=$((busy1b - busy1)) -v i1=$((idle1b - idle1)) -v path="$path" \
        'BEGIN { printf "%-9s %-22s PostgreSQL on CPU %d  %6d req/s  server %6.2f µs  PostgreSQL %6.2f µs  CPU 0 %3.0f %% busy  CPU 1 %3.0f %% busy\n",
                 name, path, cpu, rps, s / hz / n * 1e6, p / hz / n * 1e6, 100 * b0 / (b0 + i0), 100 * b1 / (b1 + i1) }'
    done
  done
  kill $pid; wait $pid 2>/dev/null || true
  sleep 0.5
done
