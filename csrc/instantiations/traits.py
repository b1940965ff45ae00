"""The instantiation trait table: the single source of what dash compiles and supports.

generate.py turns it into one .cu per (pass, head dims, dtype, mask) and into
csrc/generated/kernel_traits.h, from which the kernel configs take their tile shapes, the
registries their slots, the op checks their head dims, and the library's
`torch.ops.dash.capabilities()` its answer (dash/capabilities.py reads that: Python never
repeats these lists). Adding a head dim or a mask is one entry here.
"""

# (head_dim, head_dim_v) -> tile shape (block_m query rows, block_n keys) of each pass that
# is compiled for it, and how the backward's two MMA warpgroups share a task. A head dim
# without a "bwd" entry is forward-only: its backward raises NotImplementedError naming it.
#   forward  hdim 64 and 96: three MMA warpgroups of 64 query rows (96 on 192 x 96: +2-7% full,
#            -0.5..+3% causal over 128 x 128; with softcap -2% at causal 2k-4k, +0.6-3% elsewhere:
#            bench/RESULTS.md item 240); the others two. block_n shrinks
#            as the head dim grows so that Q and two stages of K and V fit in shared memory
#            (FlashAttention-3's tiles at 192 and 256; a multiple of 16, the P V GEMM's K step).
#            Each GEMM is one WGMMA instruction wide (widths CuTe's base shapes lack: generate.py).
#   "fwd_rescale": where the forward multiplies O by the last softmax's rescale factors:
#            "after_pv" (default: once the P V GEMM that accumulates into O has completed) or
#            "before_pv" (while the next S GEMM runs, just before that P V GEMM is issued;
#            FlashAttention-3's order past hdim 128). Measured per head dim with the eager
#            rescale (bench/RESULTS.md items 84, 86: faster at 128, slower at 96 and 256 causal,
#            even at 192) and at hdim 64 with the lazy rescale below (item 115: faster).
#   "fwd_score_tests": how the forward's steps (one KV tile each) learn whether to mask and to
#            cap their scores. "compiled" (default): steps compiled per (mask, softcap) flag, the
#            partial KV tiles (a causal diagonal, a window's edges, the keys' end) in loops of their
#            own, so no branch splits a step and ptxas lets the softmax start while the warpgroup's
#            own P V GEMM runs (faster at 96-256: item 89). "run_time": one step tests both; ptxas
#            then waits for P V before the softmax. hdim 64, whose three warpgroups' softmaxes share
#            the MUFU pipe, runs faster that way (items 89 and 118; with softcap slower: plain rules).
#            A fixed-offset softcap kernel ("fwd_capped_softmax") compiles its steps whatever this
#            says: every step capped, compiled per mask flag.
#   "fwd_epilogue": how the forward writes O. "direct" (default): from the registers, 4-byte pairs
#            of 8 rows a warp store. "staged": through a kBlockM x d_v tile of smem in TMA's swizzled
#            layout, each warp storing its 16 rows with TMA as soon as it has written them (16-byte
#            chunks, consecutive threads along a row, ran faster at 96 and 128, most at 2k-4k: item 94;
#            at hdim 64 faster up to 4k but slower at long causal calls, where its MMA warps spill the
#            staging addresses per tile: item 118; the TMA stores shortened the epilogue ~570 cycles
#            a warpgroup at even speed, item 261, and made the second Q buffer below pay).
#            Only where the tile fits beside Q and the K / V stages (not at 192 / 128, 192, 256).
#   "fwd_q_buffers": Q buffers of the forward. "one" (default): a tile's Q waits until the previous
#            tile's last S GEMM has read the buffer, so the producer loads the tile's first K before
#            it. "two": the producer loads a tile's Q (first) while the MMA warpgroups still run the
#            previous tile; its smem must fit beside the rest (config.h checks). With the TMA-store
#            epilogue two ran hdim 128 full 1k / 2k +2.1 / +2.4% and causal even (item 263), 96
#            +0.8-7% at 512-4k, the hdim 64 short walk +1.7 / +2.3% at causal 512 / 1k; hdim 64's
#            direct-epilogue kernel ran full masks 0.5-1.2% slower (item 269). With the old staged
#            copy-out hdim 128 lost 2.2% at full 2k (item 117).
#   "fwd_lazy_rescale": "on": a row's running max, which P is scaled by, may lag the true one by
#            up to 8 log2 units (FlashAttention-4's rescale threshold), each row deciding for
#            itself, so O is multiplied by the rescale factors only after a KV tile that moved some
#            row of the warp; the multiplications leave the warpgroup's turn (or, after P V, the
#            softmax stream). On at the head dims where it ran faster (bench/RESULTS.md items 112,
#            114, 115): 128, 256 (O of 128 columns a thread gains most), 192 (all but its 16k causal
#            point) and 64 with O rescaled before P V (after P V it ran even). "off" (default: O
#            rescaled after every KV tile) at 96 (within noise) and 192 / 128 (slower).
#   "fwd_capped_softmax": the softmax of bf16 softcap calls whose cap allows it (softcap <= 50.6;
#            common/score_scale.h). "fixed_offset": a softcap kernel of its own scales P by one power
#            of two instead of each row's running max (no max, no shuffles, no rescale), O then divided
#            by the sums of P as the P V GEMM took it, from one more GEMM of P with ones (a row that
#            sees one key stays exact); larger caps run the running max there. "running_max" (default):
#            the plain kernel's capped walk. A capped score takes two MUFU ops, as long as the tile's
#            GEMMs at hdim 128, so there it gains little (bench/RESULTS.md item 207), nor did it at 96
#            on 128 x 128 tiles (+0.6-1.0%, item 216); it pays at 192 / 256, where the softmax's other
#            instructions bound it (items 210, 211), at 64, whose run-time kernel tests every tile's
#            mask and cap (items 216, 217), and at 96 on 192 x 96 tiles, whose three warpgroups'
#            capped walks ran 3.8-8.4% faster so (item 242).
#   "fwd_capped_exp2": where the fixed-offset walk's exponentials run. "one_in_four_on_fma": one of
#            every four columns' on the FMA pipe (a cubic and an exponent-field add, fwd/softmax.h
#            exp2_on_fma), the rest on the MUFU: faster at hdim 64, whose walk the MUFU binds; a
#            larger share was not (item 216), nor the same at 96 (on 192 x 96: 1.2-2.4% slower than all
#            on the MUFU, item 242). "mufu" (default): all on the MUFU.
#   "fwd_short": a second forward kernel for calls whose queries see few keys, with its own tile
#            and, where they differ, its own "fwd_" choices: {"tile": (block_m, block_n),
#            "max_seqlen_k": the longest keys (max_seqlen_k of a packed call) it runs, "masks": the
#            masks it is compiled for, "fwd_...": choices}. A call takes it when its mask is one of
#            those and seqlen_k <= max_seqlen_k, and the build compiled it (fwd_registry.cpp). At
#            hdim 64 the three-warpgroup 192 x 128 tile wastes a third of its causal work on the
#            diagonal at 512 keys; two warpgroups of 128 rows (with hdim 128's choices: steps
#            compiled per flag, O staged) run causal 512 / 1k / 2k +13 / +14 / +1.5% and lose from
#            4k (-0.8 / -6 / -6% at 4k / 8k / 16k), full masks +1% at 512-1k and -7.5% from 2k
#            (bench/RESULTS.md item 185). Since the 192 x 128 kernel's upper warpgroups pass the KV
#            tiles they cannot see and its diagonal tiles mask with one compare an entry (items
#            190, 192) it runs causal 2k ~3-4% faster than the short-walk kernel and 1k 6%
#            slower; at 1088 / 1152 / 1216 / 1280 / 1536 it was faster by 8.7 / 7.8 / 3.3 / 2.4 /
#            9.1% (item 198): the limit is 1024, the longest measured length the short walk won.
#   "fwd_kv_multicast_min_seqlen_k": a second full-mask forward kernel that runs on clusters of two
#            CTAs, which work on adjacent Q tiles of one head and each load half of every K / V tile,
#            multicast to both (FlashAttention-3's full-mask forward at hdim >= 128). A fixed-length
#            full-mask call with at least this many keys, an even number of Q tiles and a grid of two
#            CTAs or more takes it (fwd_launch.h); others run the plain kernel. 0 (default): none.
#            It pays where a K / V tile is large against its GEMMs' work and the walks are long: 192,
#            192 / 128 and 256 ran 1.1-5.4% faster from 2k (bench/RESULTS.md item 286), 96 +0.9-2.3% from
#            4k and even at 1k-2k (item 287), 128 +0.7-1.6% at 16k-32k, even at 8k and 1-4% slower at
#            1k-4k (item 285); 64 even at 1k-16k (item 287): none there. The plain kernel stays as it
#            was; the multicast kernel's producer takes 40 registers with two MMA warpgroups (config.h).
#            A head dim's fixed-offset softcap kernel ("fwd_capped_softmax") gets its multicast form too
#            (softcap 30 at 192 / 256: +1.5-3.8% from 2k, item 288). Below those lengths (item 296): 256
#            +2.4% at 512 (so 512), 192 even at 512 and +0.9% at 1k, 192 / 128 -2.8% at 512 and +2.0% at
#            1k (so 1024 at both), 96 even at 1k-2k (4096 kept).
#   backward hdim 64 has room for taller Q tiles; 96 and 128 need the registers for dK/dV
#            (each MMA warpgroup keeps 64 KV rows of dK and dV, d + d_v fp32 values a row, in
#            registers: "bwd_split": "kv_rows"). Past 128 those rows do not fit in a thread's
#            registers. At 192 (and 192 with v's 128) each warpgroup owns a share of the tile's keys as
#            columns of S = Q K^T and accumulates them transposed, dK^T and dV^T, whose GEMMs
#            take the head dim as M ("kv_cols": block_n a multiple of 8 a warpgroup, so 96 keys a
#            tile, with two Q / dO stages). 192 runs "kv_cols" with 96 keys and three warpgroups:
#            one Q / dO stage only, which ran slower than dK / dV split along the head dim with two
#            warpgroups (item 50), but faster with three (item 70). 256 runs "kv_cols" on FlashAttention-3's 64 x 80
#            tiles with two warpgroups (40 keys of S / dP, 128 head-dim rows of dK^T and dV^T each:
#            160 accumulator registers a thread; "bwd_dq_slices" 2), +4.5-7.1% over the split it ran
#            before (the warpgroups splitting dK / dV along the head dim on 64 x 64 tiles, the table's
#            last such pair, so that split is gone: bench/RESULTS.md item 308); its smem holds P and dS in one buffer in turn beside one Q and one dO stage and
#            the 64 KB dQ staging buffer. Both pass P and dS through smem and have one dQ staging
#            buffer (bwd/config.h; bench/RESULTS.md items 47, 50).
#   "bwd_dq_slices": the backward's dQ GEMM of a warpgroup's share issued as this many instructions, one
#            after the other into one slice's accumulator registers, each slice handed to the dQ
#            staging buffer before the next (default 1). 2 at 256 on 64 x 80 tiles, where dK^T and
#            dV^T take 160 registers a thread and a 64 x 128 dQ accumulator beside them serialized
#            ptxas's WGMMAs and spilled 80 LDL / STL in the MMA loop (FlashAttention-3's
#            Slice_dQKV_Mma).
#   "bwd_warpgroups": MMA warpgroups of the backward (default 2). "kv_cols" at 192 and
#            192 / 128 runs three, FlashAttention-3's count at 192: each owns 32 of the 96 keys
#            of S and dP, 64 of the 192 head-dim rows of dK^T (and of dV^T at 192; at 192 / 128
#            its 32 keys of dV^T) and 64 of the 192 columns of dQ, so every warpgroup's share of
#            a head dim is one 128-byte swizzle atom. At 160 registers a thread (65536 / 512
#            threads) the accumulators fit (dK^T 48, dV^T 48 or 32, S / dP / dQ 32 a thread), and
#            the three warpgroups hide more latency than two (bench/RESULTS.md item 70).
#   "bwd_softcap": the backward's softcap kernels' choices where they differ from the plain ones,
#            one block of overrides (generate.py bwd_softcap): {"tile": (block_m, block_n),
#            "bwd_producer_registers": n, "bwd_mask": one choice or a dict of masks to choices,
#            "bwd_last_gemm": a choice}, each the plain key's meaning ("bwd", and the three below);
#            the entry's own for what it does not name. The capabilities JSON reports them as
#            "bwd_softcap_tile", "bwd_softcap_producer_registers", "bwd_softcap_mask" and
#            "bwd_softcap_last_gemm".
#            - tile: no head dim needs one today. hdim 64 ran its softcap backward on 64 x 128
#              while 1 - t^2 was kept beside P (item 61: the 128 x 128 tile's 64 S values a thread
#              left it no registers); since the P pass folds 1 - t^2 into P (item 224) it runs the
#              plain 128 x 128 tile, +4-8% (item 228).
#            - bwd_producer_registers: hdim 128's and hdim 64's softcap MMA loops spill at 232
#              registers, so their producers keep the default (0: 24, MMA 240).
#            - bwd_mask: hdim 128's full-mask softcap kernel with two bodies ran +1.3-2.0% det,
#              +0.5-1.0% non-det (bench/RESULTS.md item 234); its band kernel so compiled spills
#              (25 LDL / STL in the MMA loop), so the band keeps one body. hdim 96's softcap kernels
#              with two bodies ran det +0.6-2.1%, non-det -0.3..+1.2%, its plain ones 0.4-2.5% slower
#              (item 245), so only the softcap kernels take them there.
#   "bwd_producer_registers": registers a thread of the backward's producer warpgroup (Q / dO
#            loads, schedule, dQ writer) keeps after setmaxnreg; the MMA warpgroups get the rest
#            of the CTA's pool (common/register_split.h). Default 24 with two MMA warpgroups (MMA
#            240), 32 with three (MMA 160). The two-warpgroup head dims take 40 (MMA 232, whose
#            main loops stay spill-free): the producer's warps spill far less than at 24, and the
#            backward ran as fast or faster, most on packed mixes (bench/RESULTS.md items 109,
#            110). 48 or 56 leave the MMA warpgroups 224, where their loops spill.
#   "bwd_last_gemm": which of a backward step's last two GEMMs, dQ = dS K and dK += dS^T Q, is issued
#            last. "dk" (default): the dQ GEMM first, so its partial is staged for the dQ writer while
#            the dK GEMM runs. "dq": the dK GEMM first, so the Q stage (dK is its last reader) is
#            released while the dQ GEMM runs and its partial is staged, and the next Q load starts
#            earlier (with one Q stage every step waits for it); not with "bwd_dq_wait": "by_keys".
#            256 (one Q stage) takes "dq": on 64 x 64 tiles its softcap kernels ran det +2.0-8.9% with
#            it and its plain ones 0.5-3.2% slower on full masks (bench/RESULTS.md item 295); on 64 x 80
#            tiles, where the dQ GEMM runs in two slices after dK^T, the plain kernels too ran faster
#            with it (item 309).
#   "bwd_dq_wait": how a KV-row-split backward step's dQ GEMM (dQ = dS K over the tile's keys, each
#            warpgroup's dS^T in smem being half of those keys) waits for the other warpgroup's dS.
#            "whole" (default): both warpgroups meet at one barrier, then each issues the whole
#            GEMM. "by_keys": each issues the half over its own keys as soon as its dS is stored,
#            and waits for the other's dS (a barrier per warpgroup and Q stage) only before the
#            other half, so the wait overlaps tensor work (faster at 64 and 128, then at 96 and in
#            the softcap kernels: bench/RESULTS.md items 128, 130).
#   "bwd_tail": how a fixed-length deterministic-order diagonal launch deals its last items (up to
#            grid - 1 after the first grid, fewer in deterministic calls: bwd/schedule.h tail_items,
#            diagonal_tail_cap). "item_order" (default): as every other item, a head's last KV tile
#            first, so the launch ends on a head's longest walks. "longest_first": each head's share of
#            them in reverse, where every CTA of the launch runs (bwd/producer.h); the bits are the
#            same. With the deterministic tail capped, 96, 128 and 192 gain from it, most with few
#            heads (bench/RESULTS.md items 321, 322); the code alone cost 256 0.8-2.2% (item 312), and
#            64's 128 x 128 tiles leave a reversed wait less slack (the schedule model: no gain capped,
#            losses uncapped, item 314), so those two have none.
#   "bwd_dp_v": where a KV-row-split step's dP^T = V dO^T reads V, its A operand. "smem" (default):
#            from smem in every step. "registers": each MMA warpgroup loads its 64 KV rows of V into
#            registers once a task (ldmatrix) and the GEMM takes them from there (FlashAttention-3's
#            V_in_regs, which it uses at hdim 96 only), so a step reads one V tile less from smem. At 96
#            det and non-det ran 0.4-2.2% faster, softcap included (bench/RESULTS.md item 290, measured
#            before item 291 made its dQ GEMM one instruction); 64 and 128 (16 / 32 more registers a
#            thread) spill and serialize their WGMMAs at 232 registers.
#   "bwd_mask": how the backward step masks hidden entries (causal, windows, a sequence's last
#            tiles): their scores are set to -inf before exp2 either way (the same bits).
#            "before_exp" (default): one step body, with a branch on the step's flag around the
#            P computation. "two_bodies": the step from the S wait on compiled twice, for masked
#            and unmasked steps, the flag picking one, so that each is a single basic block from
#            the S wait to the dS store (the exponentials, the dS math and the dS stores
#            interleave). hdim 64: causal +2.6-3.3% det, full -0.3..-0.6%, over the previous
#            "after_ds" (P for every entry, hidden ones zeroed after dS; itself +0.4-3.5% over
#            before_exp), which is gone; with softcap (on its 128 x 128 tile) +4-9% over before_exp,
#            full masks most; 128 ran 1.3-3.1% slower and its band kernel spilled (bench/RESULTS.md
#            items 167, 171, 173, 232).
#   "bwd_nondet_order": how a deterministic=False backward adds its dQ partials. "unordered"
#            (default): as they come (no semaphores; the schedule's order only spreads the CTAs).
#            "ordered": in the deterministic order, the deterministic kernel run for both modes,
#            where that ran faster: 256, whose unordered adds of 64 x 256 partials met on the same
#            dQ tiles in L2 (item 47). 192 and 192 / 128 run unordered (item 139: +9-14% at 16k
#            against ordered).
#   "bwd_nondet_band_walk_steps": a fixed-length deterministic=False call with a band mask whose
#            query-head group walks (GQA) already fill the grid splits each group until a walk is
#            at most this many steps (Q tiles x query heads); 0 (default): never. 256 at 128, where
#            Llama 32/8 causal ran 4% faster at 8k-16k split (2k-4k unsplit as before); 64 at 192
#            and 192 / 128 and 128 at 256, whose unsplit walks ran 20-57% slower at 1k-16k; hdim 64
#            ran 1-2% slower split at every length, 96 no faster (bench/RESULTS.md item 152).
#   "bwd_nondet_full_walk_steps": the same for full masks; 0 (default): never. 64 at 192 and
#            192 / 128, whose GQA full-mask calls (groups of 4) ran 8-12% faster split in 2 at 2k
#            and in 4 from 4k; 256, 128, 96 and 64 ran as fast or faster unsplit (item 155).
#   "bwd_det_band_walk_steps": the same for deterministic calls (fixed-length bands, whatever the
#            grid), default 64: Llama 32/8 causal at 2k ran fastest with 2 parts (item 63). 128 at
#            256, whose deterministic 4k calls ran 7% faster with 2 parts than 4 (item 152).
#   "bwd_det_full_walk_steps": the same for deterministic full-mask calls (whatever the grid),
#            default 512: ascending's walks run best long (Llama 32/8 full unsplit at 4k-8k, item
#            63); MQA's 16k walks split. 64 at 192 and 192 / 128, whose groups of 4 leave 13% of a
#            4k call idle in its last round unsplit: split (2 parts at 2k, 4 from 4k) and dealt at
#            least 4 walks a chunk (deal_chunk_for's split floor) they ran 2-3% faster at 2k-4k; 256
#            and Llama 32/8 ran 0.7-7.5% slower split (items 161, 164).
#   "bwd_band_min_parts": fixed-length band calls of either mode split each query-head group in
#            at least this many parts (where the group divides; 1, the default: no minimum). 2 at
#            192, 192 / 128 and 256: at 1k tokens a sequence (walks of 64 steps for groups of 4)
#            2 parts ran 18-37% faster than 1, deterministic or not (item 152).
HEAD_DIMS = {
    (64, 64): {"fwd": (192, 128), "fwd_score_tests": "run_time", "fwd_rescale": "before_pv", "fwd_lazy_rescale": "on",
               "fwd_capped_softmax": "fixed_offset", "fwd_capped_exp2": "one_in_four_on_fma",
               "fwd_short": {"tile": (128, 128), "max_seqlen_k": 1024, "masks": ("band",), "fwd_score_tests": "compiled",
                             "fwd_epilogue": "staged", "fwd_q_buffers": "two", "fwd_capped_softmax": "running_max"},
               "bwd": (128, 128), "bwd_mask": "two_bodies", "bwd_split": "kv_rows",
               "bwd_producer_registers": 40, "bwd_dq_wait": "by_keys", "bwd_softcap": {"bwd_producer_registers": 0}},
    (96, 96): {"bwd_tail": "longest_first", "fwd": (192, 96), "fwd_kv_multicast_min_seqlen_k": 4096, "fwd_epilogue": "staged", "fwd_q_buffers": "two", "fwd_capped_softmax": "fixed_offset", "bwd": (64, 128), "bwd_split": "kv_rows",
               "bwd_producer_registers": 40, "bwd_dp_v": "registers", "bwd_dq_wait": "by_keys", "bwd_softcap": {"bwd_mask": "two_bodies"}},
    (128, 128): {"fwd": (128, 128), "fwd_rescale": "before_pv", "fwd_epilogue": "staged", "fwd_q_buffers": "two", "fwd_lazy_rescale": "on",
                 "fwd_kv_multicast_min_seqlen_k": 8192,
                 "bwd": (64, 128), "bwd_split": "kv_rows",
                 "bwd_producer_registers": 40, "bwd_dq_wait": "by_keys", "bwd_nondet_band_walk_steps": 256,
                 "bwd_tail": "longest_first",
                 "bwd_softcap": {"bwd_producer_registers": 0, "bwd_mask": {"full": "two_bodies"}}},
    (192, 128): {"bwd_tail": "longest_first", "fwd": (128, 128), "fwd_capped_softmax": "fixed_offset", "fwd_kv_multicast_min_seqlen_k": 1024, "bwd": (64, 96), "bwd_split": "kv_cols", "bwd_warpgroups": 3,
                 "bwd_nondet_band_walk_steps": 64, "bwd_nondet_full_walk_steps": 64, "bwd_band_min_parts": 2,
                 "bwd_det_full_walk_steps": 64},
    (192, 192): {"bwd_tail": "longest_first", "fwd": (128, 112), "fwd_capped_softmax": "fixed_offset", "fwd_kv_multicast_min_seqlen_k": 1024, "fwd_lazy_rescale": "on", "bwd": (64, 96), "bwd_split": "kv_cols", "bwd_warpgroups": 3,
                 "bwd_nondet_band_walk_steps": 64, "bwd_nondet_full_walk_steps": 64, "bwd_band_min_parts": 2,
                 "bwd_det_full_walk_steps": 64},
    (256, 256): {"fwd": (128, 80), "fwd_capped_softmax": "fixed_offset", "fwd_kv_multicast_min_seqlen_k": 512, "fwd_lazy_rescale": "on", "bwd": (64, 80), "bwd_split": "kv_cols", "bwd_warpgroups": 2, "bwd_dq_slices": 2, "bwd_producer_registers": 40,
                 "bwd_nondet_order": "ordered", "bwd_nondet_band_walk_steps": 128, "bwd_det_band_walk_steps": 128,
                 "bwd_band_min_parts": 2, "bwd_last_gemm": "dq"},
}

# Name -> (CUTLASS element type, DType enumerator, torch dtype name, PTX type of wgmma's inputs).
DTYPES = {
    "bf16": ("cutlass::bfloat16_t", "DType::kBF16", "bfloat16", "bf16"),
    "fp16": ("cutlass::half_t", "DType::kFP16", "float16", "f16"),
}

# Name -> mask policy type (csrc/kernels/common/mask.h), in MaskKind order. The band serves
# causal masks and sliding windows alike (its bounds are run-time values).
MASKS = {"full": "FullMask", "band": "BandMask"}

# Score modifiers: name -> the registry key's softcap flag (and the backward config's).
SCORE_MODS = {"plain": "false", "softcap": "true"}

# Passes: name -> (description, kernel config template, the score modifiers it serves). The
# backward's softcap path (P from the capped score, dS times 1 - t^2) has its own instantiations,
# so the plain kernels keep their code and registers. A forward kernel serves both, its capped walk
# beside the plain one (split into kernels of their own, the plain loops took more instructions:
# bench/RESULTS.md item 211), except where "fwd_capped_softmax" gives bf16 softcap calls the
# fixed-offset walk, a softcap kernel of its own (generate.py fwd_kernel_scores).
PASSES = {"fwd": ("forward", "FwdConfig", ("plain", "softcap")), "bwd": ("backward", "BwdConfig", ("plain", "softcap"))}

# What every instantiation handles beyond MHA over fixed-length batches.
FEATURES = ("gqa",)
