#!/bin/bash
# sys.sh PORT N SIZE -- CMD : syscalls of the server over N messages (after a warm-up)
# Environment: WSLOAD (bench/.build/wsload/wsload). Bounded: wsload -m N, strace and the loads under timeout.
PORT=$1; N=$2; SIZE=$3; shift 4
PORT=$PORT "$@" >/dev/null 2>&1 &
SP=$!
for _ in $(seq 1 60); do sleep 0.2; (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; done
timeout 60 $WSLOAD -m 2000 127.0.0.1 $PORT /ws/echo 100 $SIZE 30 >/dev/null
timeout 120 strace -f -c -o ${TMPDIR:-/tmp}/strace.$PORT -p $SP &
ST=$!; sleep 1
timeout 120 $WSLOAD -m $N 127.0.0.1 $PORT /ws/echo 100 $SIZE 100
sleep 0.5; kill -INT $ST; wait $ST
kill -TERM $SP; wait $SP
head -20 ${TMPDIR:-/tmp}/strace.$PORT
