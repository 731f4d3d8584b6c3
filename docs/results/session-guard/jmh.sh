#!/usr/bin/env bash
# Alternates the old core (c8a10db) and the new one, 3 rounds, pinned on CPU 1.
. /work/main/bin/jdk.sh
for round in 1 2 3; do
  for which in old new; do
    taskset -c 1 "$JAVA_HOME/bin/java" -cp /tmp/$which-core.jar:/work/main/benchmarks/target/benchmarks.jar org.openjdk.jmh.Main SqlGuard -f 1 -wi 2 -i 5 -w 1 -r 1 -rf csv -rff /tmp/bench/r3/guard-$which-$round.csv > /tmp/bench/r3/guard-$which-$round.log 2>&1
    echo "$which $round done"
  done
done
