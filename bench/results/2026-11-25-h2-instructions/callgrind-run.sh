#!/bin/bash
# usage: cg.sh PORT N label h2load-args...  -> prints total instructions
port=$1; n=$2; label=$3; shift 3
valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$label.$n.out target/release/examples/pong 127.0.0.1:$port 1 >/dev/null 2>/tmp/cg.$label.$n.err &
pid=$!
for i in $(seq 1 100); do sleep 0.2; curl -s -o /dev/null http://127.0.0.1:$port/pong && break; done
h2load "$@" -n $n http://127.0.0.1:$port/pong 2>&1 | grep -E 'succeeded' | tr '\n' ' '
kill -INT $pid; wait $pid
tot=$(grep -E '^(summary|totals):' /tmp/cg.$label.$n.out | head -1 | awk '{print $2}')
echo "$label $n $tot"
