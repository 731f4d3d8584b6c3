#!/usr/bin/env bash
# The capacity tool: today's core (0a587b3) against this change, round-robin, s1/s2/s4 at 0.5x, 1x, 5x, 10x.
set -u
. /work/main/bin/jdk.sh
export DB_URL=jdbc:postgresql://127.0.0.1:5432/test DB_USER=postgres DB_PASSWORD=
out=/tmp/cap; mkdir -p $out
for round in 1 2; do
  for side in old new; do
    jar=$([ $side = old ] && echo /tmp/old/tools/target/db-bulkhead-tools.jar || echo /work/main/tools/target/db-bulkhead-tools.jar)
    echo "== round $round $side" | tee -a $out/all.txt
    $JAVA_HOME/bin/java -jar $jar overload --scenarios s1-cpu,s2-locks,s4-mixed --loads 0.5,1,5,10 \
      --capacity-configs pool-only,recommended --duration 5 --repetitions 1 --pin --report $out/$side-$round > $out/$side-$round.txt 2>&1
    tail -40 $out/$side-$round.txt >> $out/all.txt
  done
done
echo CAP-END >> $out/all.txt
