#!/bin/bash
# Environment: WSLOAD (bench/wsload built: cc -O2 -o wsload wsload.c -lz), WORK (a scratch folder),
# BENCH (the repository's bench/). Every load is bounded in count and time.
: "${WSLOAD:?}" "${WORK:?}"; BENCH=${BENCH:-$(cd "$(dirname "$0")/../.." && pwd)}
# idle.sh BIN PORT N MODE(ws|sse|http) : prints RSS before/after and per-connection delta
BIN=$1; PORT=$2; N=$3; MODE=$4
ulimit -n 20000
cd $WORK
$BIN --listen 127.0.0.1:$PORT --workers 1 >$WORK/server.log 2>&1 &
SP=$!
sleep 2
rss() { grep VmRSS /proc/$SP/status | awk '{print $2}'; }
# warm: a few connections first so lazily made worker state exists
$WSLOAD -i 127.0.0.1 $PORT /ws/echo ${WARM:-10} 0 1 >/dev/null
sleep 0.5
R0=$(rss)
if [ $MODE = ws ]; then
  timeout 120 $WSLOAD -i 127.0.0.1 $PORT /ws/echo $N 0 25 > $WORK/client.out &
else
  (cd $BENCH && sleep 28 | timeout 120 python3 -m kilnbench.idle --port $PORT --conns $N --path $5 --hold 25 > $WORK/client.out) &
fi
CP=$!
for i in $(seq 1 90); do sleep 1; grep -q "upgraded\|opened" $WORK/client.out 2>/dev/null && break; done
sleep 3
R1=$(rss)
cat $WORK/client.out
echo "rss_before_kib=$R0 rss_after_kib=$R1 per_conn_bytes=$(( (R1-R0)*1024 / N ))"
kill $CP 2>/dev/null; wait $CP 2>/dev/null
kill -TERM $SP; wait $SP
