#!/bin/bash
# usage: ab.sh BIN PATH PORT -> prints req/s and server CPU us/req
BIN=$1; P=$2; PORT=$3
source /tmp/kd/pg.env
taskset -c 0 $BIN --listen 127.0.0.1:$PORT --workers 1 --database "${DB:-$KILN_PG_URL}" >/dev/null 2>&1 &
PID=$!
sleep 1.5
taskset -c 1 wrk -t1 -c100 -d2s http://127.0.0.1:$PORT$P >/dev/null
T0=$(awk '{print $14+$15}' /proc/$PID/stat)
OUT=$(taskset -c 1 wrk -t1 -c100 -d5s http://127.0.0.1:$PORT$P)
T1=$(awk '{print $14+$15}' /proc/$PID/stat)
REQ=$(echo "$OUT" | awk '/requests in/{print $1}')
RPS=$(echo "$OUT" | awk '/Requests\/sec/{print $2}')
kill $PID; wait $PID 2>/dev/null
python3 -c "print(f'{\"$BIN\".split(\"/\")[2][:6]:6} $P rps={float($RPS):9.0f} cpu_us={($T1-$T0)*10000/$REQ:6.2f}')"
