#!/bin/bash
cd /work/main
taskset -c 0 yes > /dev/null & H0=$!
taskset -c 1 yes > /dev/null & H1=$!
trap "kill $H0 $H1" EXIT
bin/db-bulkhead overload --scenarios s6-burst --loads 1 --max-concurrent 6 --sweep 6 --duration 10 --repetitions 3 \
    --pin --capacity-configs pool-only,fifo-deep,deadline,recommended --report /tmp/runs/burst-hog
