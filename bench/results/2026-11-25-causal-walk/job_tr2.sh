export PYTHONPATH=$PWD:$PWD/.ab/fa3 PATH=$PATH:/usr/local/cuda/bin
gunzip -c .ab/libs/final5.so.gz > dash/_C.abi3.so
python .ab/tr/clock_probe.py 2048 16384 > $OUT/clock_probe.txt 2>&1
cat $OUT/clock_probe.txt
for impl in dash fa3; do for mask in full causal; do for s in 2048 16384; do
  timeout 100 ncu --clock-control none --kernel-name-base demangled -k regex:"attn_fwd_sm90|FlashAttnFwdSm90" --launch-skip 2 --launch-count 1 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,sm__cycles_elapsed.avg.per_second,sm__inst_executed.sum \
    python .ab/tr/one.py $impl $mask $s > $OUT/ncu_${impl}_${mask}_$s.txt 2>&1
  echo "== $impl $mask $s"; grep -E "dram__|lts__|gpu__time|sm__" $OUT/ncu_${impl}_${mask}_$s.txt
done; done; done
cd $OUT && tar czf ncu.tgz ncu_*.txt && rm ncu_*.txt
