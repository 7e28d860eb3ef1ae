#!/bin/bash
# cache.sh NAME PORT SIZE -- CMD... : ir.sh with callgrind's cache simulation: Ir and simulated
# first-level data-cache misses (D1mr + D1mw) and last-level misses (DLmr + DLmw) per echoed message.
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
PORT=$PORT valgrind --tool=callgrind --cache-sim=yes "$@" >server.log 2>valgrind.log &
VP=$!
for _ in $(seq 1 240); do sleep 0.5; (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; done
run() { timeout 300 "$WSLOAD" -m "$1" 127.0.0.1 "$PORT" /ws/echo 100 "$SIZE" 250; }
run 2000 >/dev/null; timeout 60 callgrind_control -z "$VP" >/dev/null
run 2000; sleep 1; timeout 60 callgrind_control -d "$VP" >/dev/null
run 22000; sleep 1; timeout 60 callgrind_control -d "$VP" >/dev/null
kill -TERM "$VP"; wait "$VP"
parts=($(ls callgrind.out.*.[0-9] 2>/dev/null | sort -t. -k4 -n))
tot() { grep -m1 "^totals:" "$1" | cut -d" " -f2-; }
# events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
read -ra A <<<"$(tot "${parts[0]}")"; read -ra B <<<"$(tot "${parts[1]}")"
per() { echo $(( (B[$1] - A[$1]) / 20000 )); }
echo "$NAME size=$SIZE per_message: Ir=$(per 0) D1_misses=$(( $(per 4) + $(per 5) )) LL_data_misses=$(( $(per 7) + $(per 8) ))"
