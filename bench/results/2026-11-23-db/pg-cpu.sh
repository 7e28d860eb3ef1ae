#!/usr/bin/env bash
# Server and PostgreSQL CPU per request, side by side: the server on CPU 0 (one
# worker), wrk -t1 -c100 on CPU 1, PostgreSQL unpinned. PostgreSQL's CPU is summed
# over every postgres process (/proc/PID/stat utime+stime, children included).
#   pg-cpu.sh SERVER [SECONDS]     SERVER: kiln | actix-pg | xitca-pg
# Needs KILN_PG_URL and the binaries bench/run builds (bench/.build/...).
set -euo pipefail
name=$1 dur=${2:-5} root=${ROOT:-/work/main}
port=$((20000 + RANDOM % 10000))
case $name in
kiln) taskset -c 0 "$root/bench/.build/kiln/kiln-demo" --workers 1 --listen 127.0.0.1:$port --access-log off --database "$KILN_PG_URL" >/dev/null 2>&1 & ;;
*) PORT=$port DATABASE_URL=$KILN_PG_URL taskset -c 0 "$root/bench/.build/$name/release/peer-$name" >/dev/null 2>&1 & ;;
esac
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
sleep 1.5
pg_ticks() { local t=0 p s; for p in $(pgrep -u postgres postgres); do s=$(awk '{print $14+$15+$16+$17}' /proc/$p/stat 2>/dev/null || echo 0); t=$((t + s)); done; echo $t; }
srv_ticks() { awk '{print $14+$15}' /proc/$pid/stat; }
hz=$(getconf CLK_TCK)
for ep in /db '/queries?queries=20' /fortunes '/updates?queries=20'; do
    taskset -c 1 wrk -t1 -c100 -d1s "http://127.0.0.1:$port$ep" >/dev/null
    a=$(srv_ticks) b=$(pg_ticks)
    out=$(taskset -c 1 wrk -t1 -c100 -d${dur}s "http://127.0.0.1:$port$ep")
    c=$(srv_ticks) d=$(pg_ticks)
    n=$(echo "$out" | awk '/requests in/{print $1}')
    rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
    errors=$(echo "$out" | grep -E 'Non-2xx|Socket errors' | tr -s ' ' | tr '\n' ' ' || true)
    awk -v s="$name" -v e="$ep" -v r="$rps" -v sv=$((c - a)) -v pg=$((d - b)) -v n="$n" -v hz="$hz" -v err="$errors" \
        'BEGIN { printf "%-9s %-20s %10.0f req/s  server %6.1f us/req  postgres %6.1f us/req %s\n", s, e, r, sv * 1e6 / hz / n, pg * 1e6 / hz / n, err }'
done
