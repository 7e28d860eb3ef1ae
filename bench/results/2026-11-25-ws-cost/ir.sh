#!/bin/bash
# ir.sh NAME PORT SIZE -- CMD... : user-space instructions (callgrind Ir) per echoed message.
# One server process under callgrind; three bounded wsload runs of 100 connections:
# a warm-up (discarded), then 2,000 and 22,000 messages, each dumped on its own
# (callgrind_control -d dumps and zeroes). Per message = (Ir(22,000) - Ir(2,000)) / 20,000:
# the 100 handshakes and closes of each run cancel out.
# Environment: WSLOAD (bench/.build/wsload/wsload), WORK (a scratch folder).
# The VM has no hardware counters (perf stat -e instructions: <not supported>), hence callgrind.
: "${WSLOAD:?}" "${WORK:?}"
NAME=$1; PORT=$2; SIZE=$3; shift 4
mkdir -p "$WORK/$NAME-$SIZE"; cd "$WORK/$NAME-$SIZE" || exit 1
rm -f callgrind.out.*
PORT=$PORT valgrind --tool=callgrind "$@" >server.log 2>valgrind.log &
VP=$!
for _ in $(seq 1 240); do sleep 0.5; (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; done
run() { timeout 300 "$WSLOAD" -m "$1" 127.0.0.1 "$PORT" /ws/echo 100 "$SIZE" 250; }
run 2000 >/dev/null; timeout 60 callgrind_control -z "$VP" >/dev/null
run 2000; sleep 1; timeout 60 callgrind_control -d "$VP" >/dev/null
run 22000; sleep 1; timeout 60 callgrind_control -d "$VP" >/dev/null
kill -TERM "$VP"; wait "$VP"
parts=($(ls callgrind.out.*.[0-9] 2>/dev/null | sort -t. -k4 -n))
tot() { grep -m1 '^totals:' "$1" | awk '{print $2}'; }
a=$(tot "${parts[0]}"); b=$(tot "${parts[1]}")
echo "$NAME size=$SIZE Ir(2000)=$a Ir(22000)=$b per_message=$(( (b - a) / 20000 ))"
