#!/usr/bin/env bash
# As flood.sh, with a refusal held 500 ms and 1 s (db-bulkhead.web.refusal-delay) beside off and the plain 503; 2 rounds.
set -u
. /work/main/bin/jdk.sh
jar=/work/main/examples/spring-service/target/spring-service.jar
export DB_URL=jdbc:postgresql://127.0.0.1:5432/test DB_USER=postgres DB_PASSWORD=
port=18080
run() {
  local label=$1; shift
  "$JAVA_HOME/bin/java" -jar "$jar" --server.port=$port "$@" > /tmp/flood/app-$label-$round.log 2>&1 &
  local pid=$!
  for _ in $(seq 1 120); do curl -s -o /dev/null "http://127.0.0.1:$port/products" && break; sleep 0.5; done
  wrk -t2 -c50 -d5s "http://127.0.0.1:$port/products" > /dev/null 2>&1
  wrk -t2 -c200 -d20s --latency "http://127.0.0.1:$port/products" > /tmp/flood/wrk-$label-$round.txt 2>&1
  kill $pid; wait $pid 2>/dev/null
  local total=$(awk '/requests in/ {print $1}' /tmp/flood/wrk-$label-$round.txt)
  local non2xx=$(awk '/Non-2xx/ {print $5}' /tmp/flood/wrk-$label-$round.txt)
  echo "$label round $round: requests $total, non-2xx ${non2xx:-0}, 200s/s $(( (total - ${non2xx:-0}) / 20 ))"
}
for round in 4 5; do
  run off --db-bulkhead.enabled=false
  run on-503
  run on-503-delay500ms --db-bulkhead.web.refusal-delay=500ms
  run on-503-delay1s --db-bulkhead.web.refusal-delay=1s
done
