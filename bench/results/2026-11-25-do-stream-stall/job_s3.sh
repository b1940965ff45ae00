#!/bin/bash
# The window cases in a loop (.ab/stress_window.py) on the patched library and on 111ccab's, alternately.
START=$(date +%s)
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
for lib in patched head111 patched head111; do
  gunzip -c .ab/libs/$lib.so.gz > dash/_C.abi3.so
  timeout -s KILL 100 python3 .ab/stress_window.py 70 > $OUT/stress_$lib.$(date +%s).txt 2>&1
  echo "$lib rc=$? at $(( $(date +%s)-START ))s: $(tail -1 $(ls -t $OUT/stress_$lib.*.txt | head -1))"
done
cd $OUT && tar czf logs.tgz *.txt && rm -f *.txt
