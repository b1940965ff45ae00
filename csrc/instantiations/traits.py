"""The instantiation trait table: the single source of what dash compiles and supports.

generate.py turns it into one .cu per (pass, head dim, dtype, mask) and into
csrc/generated/kernel_traits.h, from which the kernel configs take their tile shapes, the
registries their slots, the op checks their head dims, and the library's
`torch.ops.dash.capabilities()` its answer (dash/capabilities.py reads that: Python never
repeats these lists). Adding a head dim or a mask is one entry here.
"""

# Head dim -> tile shape (block_m query rows, block_n keys) of each pass.
#   forward  hdim 64: three MMA warpgroups of 64 query rows; hdim 128: two.
#   backward hdim 64 has room for taller Q tiles; hdim 128 needs the registers for dK/dV.
HEAD_DIMS = {
    64: {"fwd_tile": (192, 128), "bwd_tile": (128, 128)},
    128: {"fwd_tile": (128, 128), "bwd_tile": (64, 128)},
}

# Name -> (CUTLASS element type, DType enumerator, torch dtype name).
DTYPES = {
    "bf16": ("cutlass::bfloat16_t", "DType::kBF16", "bfloat16"),
    "fp16": ("cutlass::half_t", "DType::kFP16", "float16"),
}

# Name -> mask policy type (csrc/kernels/common/mask.h), in MaskKind order. The band serves
# causal masks and sliding windows alike (its bounds are run-time values).
MASKS = {"full": "FullMask", "band": "BandMask"}

# Score modifiers: name -> the kernel config's kSoftcap flag.
SCORE_MODS = {"plain": "false", "softcap": "true"}

# Passes: name -> (description, kernel config template, the score modifiers it is compiled
# for). The forward caps scores at run time (an in-place tanh on S, nothing when off); the
# backward's softcap path (P from the capped score, dS times 1 - t^2) has its own
# instantiations, so the plain kernels keep their code and registers.
PASSES = {"fwd": ("forward", "FwdConfig", ("plain",)), "bwd": ("backward", "BwdConfig", ("plain", "softcap"))}

# What every instantiation handles beyond MHA over fixed-length batches.
FEATURES = ("gqa",)
