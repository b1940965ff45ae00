export PYTHONPATH=$PWD
gunzip -c .ab/libs/final5.so.gz > dash/_C.abi3.so
python .ab/tr/band_probe.py 2>&1 | tee $OUT/band_probe.txt
