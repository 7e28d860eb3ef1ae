#!/bin/bash
# Environment: WSLOAD (bench/wsload built: cc -O2 -o wsload wsload.c -lz), WORK (a scratch folder),
# BENCH (the repository's bench/). Every load is bounded in count and time.
: "${WSLOAD:?}" "${WORK:?}"; BENCH=${BENCH:-$(cd "$(dirname "$0")/../.." && pwd)}
# sys.sh PORT N SIZE -- CMD... : syscalls of the server over N echoed messages (strace -c)
PORT=$1; N=$2; SIZE=$3; shift 4
cd $WORK
PORT=$PORT timeout 300 strace -f -c -o $WORK/strace.out "$@" > /dev/null 2>&1 &
VP=$!
for i in $(seq 1 120); do sleep 0.5; (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; done
timeout 200 $WSLOAD -m $N 127.0.0.1 $PORT /ws/echo 100 $SIZE 150 >/dev/null
PID=$(pgrep -P $(pgrep -P $VP | head -1) | head -1); kill -TERM $PID 2>/dev/null
wait $VP
awk 'NR>2 && $NF!="total" && $4 ~ /^[0-9]+$/ {print $NF, $4}' $WORK/strace.out | sort -k2 -n -r | head -8
