#!/bin/bash
# Throwaway: RSS per idle live counter view (examples/live_counter, release).
# usage: mem.sh LABEL N
set -e
label=$1; n=$2
bin=/work/wt/livecost/target/release/examples/live_counter
out=/tmp/livecost/mem-$label; mkdir -p $out
ss -ltn | grep -q ':3000 ' && { echo "port 3000 busy"; exit 1; }
KILN_SECRET_KEY=0123456789abcdef0123456789abcdef0123456789abcdef $bin > $out/server.log 2>&1 &
spid=$!
for i in $(seq 1 60); do ss -ltn | grep -q ':3000 ' && break; sleep 0.2; done
# Warm up: one page and 50 sockets, so that the first allocations are not counted.
python3 /tmp/livecost/liveclient.py 3000 /counter 50 0 > /dev/null
sleep 1
rss0=$(awk '/VmRSS/{print $2}' /proc/$spid/status)
python3 /tmp/livecost/liveclient.py 3000 /counter $n 0 8 > $out/client.log 2>&1 &
cpid=$!
for i in $(seq 1 300); do grep -q mounted $out/client.log 2>/dev/null && break; sleep 0.2; done
sleep 3
rss1=$(awk '/VmRSS/{print $2}' /proc/$spid/status)
wait $cpid || true
kill -INT $spid; wait $spid || true
echo "rss_before_kib=$rss0 rss_after_kib=$rss1 n=$n per_view_kib=$(echo "scale=3; ($rss1-$rss0)/$n" | bc)"
