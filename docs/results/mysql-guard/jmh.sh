#!/usr/bin/env bash
# The guard's reading of the same statements by PostgreSQL's rules (find) and MySQL's (mysql), one JMH run each round, 3 rounds, CPU 1.
. /work/main/bin/jdk.sh
for round in 1 2 3; do
  taskset -c 1 "$JAVA_HOME/bin/java" -jar /work/main/benchmarks/target/benchmarks.jar 'SqlGuardBenchmark' -f 1 -wi 2 -i 5 -w 1 -r 1 \
      -rf csv -rff docs/results/mysql-guard/mysql-pg-$round.csv > /tmp/bench/my2/mysql-pg-$round.log 2>&1
  echo "round $round done"
done
