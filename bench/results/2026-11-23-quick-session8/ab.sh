#!/usr/bin/env bash
# OLD=kiln-demo of 6dde264 (session 7), NEW=kiln-demo of this session; both copied to /tmp first.
# A/B: CPU µs per request of the old and new kiln-demo on PATH, alternating, ROUNDS rounds
path=$1 rounds=${2:-5}
hz=$(getconf CLK_TCK)
d=$(mktemp -d)
run() {
  local bin=$1 port=$((21000 + RANDOM % 5000))
  taskset -c 0 $bin --workers 1 --listen 127.0.0.1:$port --access-log off --database sqlite://$d/$RANDOM.sqlite >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:$port$path && break; sleep 0.1; done
  taskset -c 1 wrk -t1 -c100 -d1s http://127.0.0.1:$port$path >/dev/null
  local t0=$(awk '{print $14+$15}' /proc/$pid/stat)
  local out=$(taskset -c 1 wrk -t1 -c100 -d4s http://127.0.0.1:$port$path)
  local t1=$(awk '{print $14+$15}' /proc/$pid/stat)
  local n=$(awk '/requests in/{print $1}' <<<"$out")
  kill $pid; wait $pid 2>/dev/null
  awk -v t=$((t1-t0)) -v n=$n -v hz=$hz 'BEGIN{printf "%.3f %d", t/hz/n*1e6, n/4}'
}
for r in $(seq $rounds); do
  o=$(run ${OLD:-/tmp/kiln-old}); n=$(run ${NEW:-/tmp/kiln-new})
  echo "round $r  old $o   new $n"
done
