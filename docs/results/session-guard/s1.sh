#!/usr/bin/env bash
# s1-cpu at 5x, old (c8a10db) and new tools alternated, 3 rounds (old,new; new,old; old,new), pinned.
. /work/main/bin/jdk.sh
run() {
  echo "## $1 round $2" >> /tmp/bench/s1/run.txt
  (cd /tmp && "$JAVA_HOME/bin/java" -jar $3 overload --scenarios s1-cpu --loads 5 --duration 5 --repetitions 1 --pin \
      --capacity-configs pool-only,recommended >> /tmp/bench/s1/run.txt 2>/tmp/bench/s1/err-$1-$2.txt)
  echo "" >> /tmp/bench/s1/run.txt
  echo "$1 $2 done"
}
OLD=/tmp/oldtree/tools/target/db-bulkhead-tools.jar
NEW=/work/main/tools/target/db-bulkhead-tools.jar
cp -r /work/main/tools/target /tmp/newtools-target 2>/dev/null; NEW=/tmp/newtools-target/db-bulkhead-tools.jar
run old 1 $OLD; run new 1 $NEW
run new 2 $NEW; run old 2 $OLD
run old 3 $OLD; run new 3 $NEW
