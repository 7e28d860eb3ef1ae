#!/bin/bash
# Throwaway: instructions per delivered update of examples/live_chat under callgrind.
# usage: cg.sh LABEL N UPDATES
set -e
label=$1; n=$2; updates=$3
bin=/work/wt/livecost/target/release/examples/${BIN:-live_chat}
out=/tmp/livecost/cg-$label
mkdir -p $out; rm -f $out/callgrind.out.*
ss -ltn | grep -q ':3000 ' && { echo "port 3000 busy"; exit 1; }
KILN_SECRET_KEY=0123456789abcdef0123456789abcdef0123456789abcdef valgrind --tool=callgrind --callgrind-out-file=$out/callgrind.out.%p --dump-instr=no $bin > $out/server.log 2>&1 &
vpid=$!
for i in $(seq 1 120); do ss -ltn | grep -q ':3000 ' && break; sleep 0.5; done
rm -f $out/go
python3 /tmp/livecost/liveclient.py 3000 ${PAGE:-/chat/lobby} $n $updates -1 $out/go > $out/client.log 2>&1 &
cpid=$!
for i in $(seq 1 600); do grep -q mounted $out/client.log 2>/dev/null && break; sleep 0.5; done
callgrind_control -z $vpid >/dev/null
touch $out/go
wait $cpid || true
callgrind_control -d $vpid >/dev/null
sleep 1
kill -INT $vpid; wait $vpid || true
cat $out/client.log
