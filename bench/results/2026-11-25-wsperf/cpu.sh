#!/bin/bash
# Environment: WSLOAD (bench/wsload built: cc -O2 -o wsload wsload.c -lz), WORK (a scratch folder),
# BENCH (the repository's bench/). Every load is bounded in count and time.
: "${WSLOAD:?}" "${WORK:?}"; BENCH=${BENCH:-$(cd "$(dirname "$0")/../.." && pwd)}
# cpu.sh PORT N SIZE Z -- CMD... : server CPU (utime+stime, /proc) per echoed message over N messages
PORT=$1; N=$2; SIZE=$3; Z=$4; shift 5
cd $WORK
"$@" > /dev/null 2>&1 &
SP=$!
for i in $(seq 1 60); do sleep 0.2; (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; done
ZF=""; [ $Z = 1 ] && ZF="-z"
timeout 60 $WSLOAD -m 2000 $ZF 127.0.0.1 $PORT /ws/echo 100 $SIZE 30 >/dev/null
t0=$(awk '{print $14+$15}' /proc/$SP/stat)
OUT=$(timeout 120 $WSLOAD -m $N $ZF 127.0.0.1 $PORT /ws/echo 100 $SIZE 100)
t1=$(awk '{print $14+$15}' /proc/$SP/stat)
kill -TERM $SP; wait $SP
TCK=$(getconf CLK_TCK)
echo "$OUT" | tr '\n' ' '; echo " cpu_us_per_msg=$(python3 -c "print(round(($t1-$t0)/$TCK/$N*1e6,2))")"
