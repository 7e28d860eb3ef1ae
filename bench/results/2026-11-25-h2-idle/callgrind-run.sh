#!/bin/bash
# Total user-space instructions of a server (kiln-demo or h2o) serving one h2load run,
# counted by callgrind (this VM has no hardware counters: `perf stat -e instructions` is
# "not supported"). Run twice per case with different N: the difference of the totals over
# the difference of N is the cost per request (start-up and shutdown cancel out).
#
# usage: callgrind-run.sh kiln|h2o BINARY PORT N PATH label h2load-args...
#   kiln: BINARY is a kiln-demo (release); h2o: BINARY is a rendered h2o.conf.
set -euo pipefail
server=$1; binary=$2; port=$3; n=$4; path=$5; label=$6; shift 6
out=/tmp/cg.$label.$n.out
case $server in
kiln) valgrind --tool=callgrind --callgrind-out-file=$out \
        "$binary" --workers 1 --listen 127.0.0.1:$port --access-log off >/dev/null 2>/tmp/cg.$label.$n.err & ;;
h2o) valgrind --tool=callgrind --callgrind-out-file=$out h2o -m worker -c "$binary" >/dev/null 2>/tmp/cg.$label.$n.err & ;;
esac
pid=$!
for _ in $(seq 1 300); do
    sleep 0.2
    curl -s -o /dev/null --http2-prior-knowledge "http://127.0.0.1:$port$path" && break
done
timeout 600 h2load "$@" -n "$n" "http://127.0.0.1:$port$path" 2>&1 | grep -E 'succeeded' | tr '\n' ' '
kill -INT $pid; sleep 1; kill -TERM $pid 2>/dev/null || true
wait $pid || true
tot=$(grep -E '^(summary|totals):' $out | head -1 | awk '{print $2}')
echo "$label $n $tot"
