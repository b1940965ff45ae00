#!/bin/bash
# dash.distributed on two GPUs (NCCL), the first multi-GPU run (issue 16 had ended blocked: no
# multi-GPU machine was lent). The example GPT with context parallelism over 2 ranks, Ulysses and
# ring, deterministic: twice on 2 GPUs with NCCL (same weights SHA256 expected), once with both
# ranks sharing GPU 0 through gloo (the one-GPU bitwise reference: the same SHA256 expected).
# The library: item 115's final library (.ab/libs/final3.so.gz).
gunzip -c .ab/libs/final3.so.gz > dash/_C.abi3.so
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
nvidia-smi --query-gpu=index,name,power.limit --format=csv,noheader
nvidia-smi topo -m 2>&1 | head -4
ARGS="--deterministic --steps ${STEPS:-20} --seqlen 4096 --batch-size 2 --layers 2 --log-every 10"
for cp in ulysses ring; do
  for run in nccl1 nccl2; do
    timeout 150 torchrun --nproc-per-node 2 examples/train_gpt_cp.py --cp $cp $ARGS --out $OUT/$cp-$run \
      > $OUT/${cp}_$run.log 2>&1
    echo "$cp $run rc=$?: $(grep 'final loss' $OUT/${cp}_$run.log)"
  done
  CUDA_VISIBLE_DEVICES=0 timeout 150 torchrun --nproc-per-node 2 examples/train_gpt_cp.py --cp $cp $ARGS --backend gloo \
    --out $OUT/$cp-gloo > $OUT/${cp}_gloo.log 2>&1
  echo "$cp gloo-one-gpu rc=$?: $(grep 'final loss' $OUT/${cp}_gloo.log)"
  python3 - "$OUT" "$cp" <<'PY'
import json, pathlib, sys
out, cp = pathlib.Path(sys.argv[1]), sys.argv[2]
r = {run: json.loads((out / f"{cp}-{run}" / f"train_gpt_cp_{cp}.json").read_text())
     for run in ("nccl1", "nccl2", "gloo") if (out / f"{cp}-{run}" / f"train_gpt_cp_{cp}.json").exists()}
sha = {k: v["weights_sha256"] for k, v in r.items()}
print(cp, "weights sha256:", {k: s[:16] for k, s in sha.items()}, "all equal:", len(set(sha.values())) == 1 and len(sha) == 3)
print(cp, "median step ms:", {k: round(v["median_step_ms"], 1) for k, v in r.items()})
PY
done
(cd $OUT && tar czf logs.tgz */ *.log && rm -rf */ *.log)
