export PYTHONPATH=$PWD
gunzip -c .ab/libs/order.so.gz > dash/_C.abi3.so
python .ab/tr/order_probe2.py 2>&1 | tee $OUT/order_probe2.txt
