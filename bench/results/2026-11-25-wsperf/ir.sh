#!/bin/bash
# Environment: WSLOAD (bench/wsload built: cc -O2 -o wsload wsload.c -lz), WORK (a scratch folder),
# BENCH (the repository's bench/). Every load is bounded in count and time.
: "${WSLOAD:?}" "${WORK:?}"; BENCH=${BENCH:-$(cd "$(dirname "$0")/../.." && pwd)}
# ir.sh NAME PORT N SIZE DEFLATE(0|1) -- CMD... : user-space instructions (callgrind Ir) of the server over N echoed messages
NAME=$1; PORT=$2; N=$3; SIZE=$4; Z=$5; shift 6
cd $WORK
OUT=$WORK/vg-$NAME-$N-$SIZE-$Z.txt
PORT=$PORT timeout 600 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" > /dev/null 2> $OUT &
VP=$!
for i in $(seq 1 120); do sleep 0.5; (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; done
ZF=""; [ $Z = 1 ] && ZF="-z"
timeout 300 $WSLOAD -m $N $ZF 127.0.0.1 $PORT /ws/echo 100 $SIZE 250
kill -TERM $VP 2>/dev/null; 
PID=$(pgrep -P $VP | head -1); [ -n "$PID" ] && kill -TERM $PID
wait $VP
grep -E "Collected" $OUT
