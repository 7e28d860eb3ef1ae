#!/bin/bash
# Total user-space instructions of the pong example (release) serving one h2load run,
# counted by callgrind. Run twice per case with different N: the difference of the
# totals over the difference of N is the cost per request (start-up cancels out).
#
# usage: callgrind-run.sh ENGINE PORT N PATH label h2load-args...
#   ENGINE: "own" (kiln's own HTTP/2 engine) or "h2" (the h2 crate's)
set -euo pipefail
engine=$1; port=$2; n=$3; path=$4; label=$5; shift 5
KILN_H2_ENGINE=$engine valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$label.$n.out \
    "${PONG:-target/release/examples/pong}" 127.0.0.1:$port 1 >/dev/null 2>/tmp/cg.$label.$n.err &
pid=$!
for _ in $(seq 1 150); do
    sleep 0.2
    curl -s -o /dev/null "http://127.0.0.1:$port/pong" && break
done
timeout 300 h2load "$@" -n "$n" "http://127.0.0.1:$port$path" 2>&1 | grep -E 'succeeded' | tr '\n' ' '
kill -INT $pid
wait $pid || true
tot=$(grep -E '^(summary|totals):' /tmp/cg.$label.$n.out | head -1 | awk '{print $2}')
echo "$label $n $tot"
