set -x
gunzip -c .ab/libs/trace.so.gz > dash/_C.abi3.so
python .ab/tr/trace_run.py 2048 4096 16384 > $OUT/trace_run.txt 2>&1
python .ab/tr/trace_sum.py $OUT > $OUT/trace_sum.txt 2>&1
cat $OUT/trace_run.txt $OUT/trace_sum.txt
