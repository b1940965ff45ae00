// Compile-time configuration of the sm90 forward kernel for one (head dims, dtype, mask):
// tile shape, the two tiled WGMMAs, shared-memory layouts and the shared storage.
//
// Shape of the work: a CTA owns a Q tile (kBlockM rows) and streams the KV tiles of its
// head through a K pipeline and a V pipeline. Each MMA warpgroup owns 64 query rows for
// the whole tile, so its softmax statistics stay in its registers:
//   S  = Q K^T   (kBlockM x kBlockN)  SS-GEMM, split over warpgroups along Q rows
//   O += P V     (kBlockM x d_v)      RS-GEMM, A = P straight from registers
// (d: head dim of q and k; d_v: of v and out, which may differ, e.g. 192 / 128).
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/gemm/collective/builders/sm90_common.inl>
#include <cutlass/numeric_types.h>

#include "../../attn_fwd_params.h"
#include "../../generated/wgmma_wide.h"
#include "../common/mask.h"
#include "../common/register_split.h"
#include "../common/seq_geometry.h"
#include "../common/tma_pipeline.h"

namespace dash {

using namespace cute;

// A tile as the producer publishes it to the MMA warpgroups: Q tile m_block of one query
// head of one sequence, and the KV tiles [n_block_begin, n_block_end) it visits (the mask's
// SeqTiles range; empty: no row sees a key); m_block < 0 ends the kernel.
struct FwdTileInfo {
  SeqInfo seq;
  int m_block, head, n_block_begin, n_block_end;
  CUTE_HOST_DEVICE int num_n_blocks() const { return n_block_end > n_block_begin ? n_block_end - n_block_begin : 0; }
};

// Named barriers of the forward kernel (ids 8.. : see BwdBarrier for the id range).
enum class FwdBarrier : int {
  kGemmTurn0 = 8,  // kGemmTurn0 + wg: warpgroup wg may issue its next GEMMs
};

// kShortWalk_: the short-walk kernel, with the trait table's "fwd_short" tile and choices (for
// calls whose queries see few keys; fwd_registry.cpp picks it per call).
// kFixedOffsetSoftcap_: the kernel for softcap calls with a fixed offset in place of the running
// max (traits.py "fwd_capped_softmax"; bf16 only, fp16's P cannot hold the range). It holds that walk
// and, for caps too large for it, the running-max capped walk. Every other forward kernel serves
// plain and softcap calls alike, with the capped walk beside the plain one (split into kernels of
// their own, the plain kernels' loops took more instructions: bench/RESULTS.md item 211).
// kKvMulticast_: the kernel that runs on 2-CTA clusters, each CTA loading half of every K / V tile
// into both (traits.py "fwd_kv_multicast_min_seqlen_k"; the launch of the plain kernel's config
// picks it per call, fwd_launch.h).
template <int kHeadDim_, int kHeadDimV_, class Element_, class Mask_, bool kShortWalk_ = false,
          bool kFixedOffsetSoftcap_ = false, bool kKvMulticast_ = false>
struct FwdConfig {
  using Element = Element_;
  using ElementAccum = float;
  using Mask = Mask_;
  static constexpr int kHeadDim = kHeadDim_;    // q, k
  static constexpr int kHeadDimV = kHeadDimV_;  // v, out
  static constexpr bool kBanded = Mask::kBanded;
  static constexpr bool kShortWalk = kShortWalk_;
  static constexpr bool kFixedOffsetSoftcap = kFixedOffsetSoftcap_;
  static constexpr bool kKvMulticast = kKvMulticast_;
  // Only the full mask's tiles pair up (fixed tile order, one KV range for every tile). The fixed-offset
  // softcap kernels have their multicast form too (bench/RESULTS.md item 288).
  static constexpr bool kHasKvMulticastKernel = !Mask::kBanded && !kShortWalk_ &&
                                                fwd_kv_multicast_min_seqlen_k(kHeadDim_, kHeadDimV_) > 0;
  static_assert(!kKvMulticast || kHasKvMulticastKernel, "K / V multicast: full-mask kernels the trait table names");
  using KvMulticastConfig = FwdConfig<kHeadDim_, kHeadDimV_, Element_, Mask_, kShortWalk_, kFixedOffsetSoftcap_, true>;
  static_assert(head_dim_slot(kHeadDim, kHeadDimV) >= 0, "head dims not in the trait table");

  // hdim 64: three warpgroups of 64 rows (the GEMMs are short, more rows per K/V load);
  // larger head dims: two, which leaves each thread room for S, P and O (traits.py).
  static constexpr int kBlockM = fwd_tile_shape(kHeadDim, kHeadDimV, kShortWalk).block_m;
  static constexpr int kBlockN = fwd_tile_shape(kHeadDim, kHeadDimV, kShortWalk).block_n;
  static_assert(kBlockM > 0, "no such forward kernel in the trait table");
  static_assert(kBlockN % 16 == 0, "P V: kBlockN is the GEMM's K extent");
  // Each MMA warpgroup owns as many query rows as one WGMMA instruction's M.
  static constexpr int kRowsPerWarpGroup = 64;
  static_assert(kBlockM % kRowsPerWarpGroup == 0, "one MMA warpgroup per kRowsPerWarpGroup query rows");
  static constexpr int kStages = 2;  // K and V pipeline depth
  static constexpr int kNumMmaWarpGroups = kBlockM / kRowsPerWarpGroup;
  static constexpr int kNumMmaThreads = kNumMmaWarpGroups * 128;
  static constexpr int kNumThreads = kNumMmaThreads + 128;  // + producer warpgroup
  // Where O is multiplied by the last softmax's rescale factors (traits.py "fwd_rescale").
  static constexpr bool kRescaleBeforePv = fwd_rescale_before_pv(kHeadDim, kHeadDimV, kShortWalk);
  // O rescaled only when some row's max grew past a threshold (traits.py "fwd_lazy_rescale").
  static constexpr bool kLazyRescale = fwd_lazy_rescale(kHeadDim, kHeadDimV, kShortWalk);
  // Steps compiled per (mask, softcap) flag, or one step that tests both at run time (traits.py
  // "fwd_score_tests").
  // (The fixed-offset softcap kernel's steps are compiled: all of them capped.)
  static constexpr bool kScoreTestsAtRunTime =
      !kFixedOffsetSoftcap && fwd_score_tests_at_run_time(kHeadDim, kHeadDimV, kShortWalk);
  // A call whose softcap allows it (common/score_scale.h fixed_offset_fits) scales P by a fixed
  // offset instead of the running row max (fwd/softmax.h CappedSoftmax).
  static_assert(!kFixedOffsetSoftcap || (std::is_same_v<Element, cutlass::bfloat16_t> &&
                                         fwd_capped_fixed_offset(kHeadDim, kHeadDimV, kShortWalk)),
                "the fixed-offset softcap kernel: bf16, where the trait table says");
  // Of every four exponentials of the fixed-offset walk, how many run on the FMA pipe (traits.py
  // "fwd_capped_exp2"; fwd/softmax.h exp2_on_fma).
  static constexpr int kCappedExp2OnFmaPerFour = fwd_capped_exp2_one_in_four_on_fma(kHeadDim, kHeadDimV, kShortWalk) ? 1 : 0;
  // The multicast kernel's producer takes 40 registers beside two MMA warpgroups (its step loops spill
  // at 24; the MMA warpgroups keep 232, spill-free); beside three it keeps 32 (at 40 hdim 64's MMA
  // warpgroups, left 152, spilled).
  static constexpr int kProducerRegistersAsked = kKvMulticast && kNumMmaWarpGroups == 2 ? 40 : 0;
  static constexpr int kProducerRegisters = RegisterSplit<kNumMmaWarpGroups, kProducerRegistersAsked>::kProducer;
  static constexpr int kMmaRegisters = RegisterSplit<kNumMmaWarpGroups, kProducerRegistersAsked>::kMma;

  using TileShapeS = Shape<Int<kBlockM>, Int<kBlockN>, Int<kHeadDim>>;  // (q, kv, d)
  using TileShapeO = Shape<Int<kBlockM>, Int<kHeadDimV>, Int<kBlockN>>;  // (q, d_v, kv)
  // CuTe's selector knows the base WGMMA widths only (the units do not compile its extended shapes'
  // headers); where it would split the tile's keys into narrower instructions, the generated
  // instruction as wide as the tile takes its place (generated/wgmma_wide.h).
  using CuteOpS = decltype(GMMA::ss_op_selector<Element, Element, ElementAccum, TileShapeS>());
  using OpS = cute::conditional_t<size<1>(typename MMA_Traits<CuteOpS>::Shape_MNK{}) == kBlockN, CuteOpS,
                                  WideSsWgmma<kBlockN, Element, GMMA::Major::K, GMMA::Major::K>>;
  using TiledMmaS = decltype(make_tiled_mma(OpS{}, Layout<Shape<Int<kNumMmaWarpGroups>, _1, _1>>{}));
  using TiledMmaO = decltype(make_tiled_mma(
      GMMA::rs_op_selector<Element, Element, ElementAccum, TileShapeO, GMMA::Major::K, GMMA::Major::MN>(),
      Layout<Shape<Int<kNumMmaWarpGroups>, _1, _1>>{}));
  // One WGMMA instruction spans each GEMM's N (keys for S, d_v for O).
  static_assert(size<1>(typename TiledMmaS::AtomShape_MNK{}) == kBlockN, "S GEMM: WGMMA N != kBlockN");
  static_assert(size<1>(typename TiledMmaO::AtomShape_MNK{}) == kHeadDimV, "P V GEMM: WGMMA N != head_dim_v");

  // ---- shared memory layouts (128B-swizzled, K-major as loaded by TMA) ----
  using SmemAtomQ = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                             GMMA::Major::K, Element, Int<kBlockM>, Int<kHeadDim>>());
  using SmemLayoutQ = decltype(tile_to_shape(SmemAtomQ{}, make_shape(Int<kBlockM>{}, Int<kHeadDim>{})));
  // Q buffers (traits.py "fwd_q_buffers"): with two the producer loads a tile's Q while the MMA
  // warpgroups still run the previous tile's last steps; with one Q waits until the previous
  // tile's last S GEMM has read its buffer.
  static constexpr int kQStages = fwd_two_q_buffers(kHeadDim, kHeadDimV, kShortWalk) ? 2 : 1;
  using SmemLayoutQStages = decltype(tile_to_shape(SmemAtomQ{}, make_shape(Int<kBlockM>{}, Int<kHeadDim>{}, Int<kQStages>{})));
  using SmemAtomKV = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                              GMMA::Major::K, Element, Int<kBlockN>, Int<kHeadDim>>());
  using SmemLayoutK = decltype(tile_to_shape(
      SmemAtomKV{}, make_shape(Int<kBlockN>{}, Int<kHeadDim>{}, Int<kStages>{})));
  using SmemAtomV = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                             GMMA::Major::K, Element, Int<kBlockN>, Int<kHeadDimV>>());
  using SmemLayoutV = decltype(tile_to_shape(
      SmemAtomV{}, make_shape(Int<kBlockN>{}, Int<kHeadDimV>{}, Int<kStages>{})));
  // V seen as (d_v, kBlockN): the MN-major B operand of O += P V.
  using SmemLayoutVt = decltype(composition(
      SmemLayoutV{}, make_layout(make_shape(Int<kHeadDimV>{}, Int<kBlockN>{}, Int<kStages>{}),
                                 make_stride(Int<kBlockN>{}, _1{}, Int<kBlockN * kHeadDimV>{}))));

  static constexpr uint32_t kTmaBytesQ = kBlockM * kHeadDim * sizeof(Element);
  static constexpr uint32_t kTmaBytesK = kBlockN * kHeadDim * sizeof(Element);
  static constexpr uint32_t kTmaBytesV = kBlockN * kHeadDimV * sizeof(Element);

  using Pipeline = TmaPipeline<kStages>;

  // The epilogue stages O in smem for TMA stores, or the MMA threads store it from their
  // registers (traits.py "fwd_epilogue"; the staged tile needs the smem). The staged tile has the
  // swizzled layout TMA reads (its atoms' columns outermost), so each warp's 16 rows of an atom's
  // columns are one dense TMA box: a warp stores its rows on its own.
  static constexpr bool kStagedEpilogue = fwd_epilogue_staged(kHeadDim, kHeadDimV, kShortWalk);
  static constexpr int kWarpRows = 16;  // a warp's rows of a WGMMA accumulator
  using SmemAtomO = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                             GMMA::Major::K, Element, Int<kWarpRows>, Int<kHeadDimV>>());
  static constexpr int kAtomColsO = size<1>(SmemAtomO{});
  using SmemLayoutOStage = decltype(tile_to_shape(SmemAtomO{}, make_shape(Int<kBlockM>{}, Int<kHeadDimV>{})));
  using SmemLayoutOBox = decltype(tile_to_shape(SmemAtomO{}, make_shape(Int<kWarpRows>{}, Int<kAtomColsO>{})));
  struct NoStage {};
  using OStage = std::conditional_t<kStagedEpilogue, cute::array_aligned<Element, cosize_v<SmemLayoutOStage>, 1024>, NoStage>;

  // O's row sums in the fixed-offset walk: P (as the P V GEMM takes it, 16-bit) times a kBlockN x
  // kRowSumCols tile of ones, one more RS GEMM beside P V. Every column of the result is the row's sum
  // of the very values P V summed, so O / sum is exact where a row sees one key (a running max makes
  // that row's P exactly 1; a fixed offset does not).
  static constexpr int kRowSumCols = 8;  // the narrowest WGMMA
  using TileShapeRowSum = Shape<Int<kBlockM>, Int<kRowSumCols>, Int<kBlockN>>;
  using TiledMmaRowSum = decltype(make_tiled_mma(
      GMMA::rs_op_selector<Element, Element, ElementAccum, TileShapeRowSum, GMMA::Major::K, GMMA::Major::K>(),
      Layout<Shape<Int<kNumMmaWarpGroups>, _1, _1>>{}));
  using SmemAtomOnes = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                                GMMA::Major::K, Element, Int<kRowSumCols>, Int<kBlockN>>());
  using SmemLayoutOnes = decltype(tile_to_shape(SmemAtomOnes{}, make_shape(Int<kRowSumCols>{}, Int<kBlockN>{})));
  struct NoOnes {};
  using OnesStage = std::conditional_t<kFixedOffsetSoftcap, cute::array_aligned<Element, cosize_v<SmemLayoutOnes>, 128>, NoOnes>;

  struct SharedStorage {
    // Tile records: tile t's sits in tile[t % kTileRecords] until its epilogue is done, so the MMA
    // warpgroups read fields when they need them instead of holding them in registers. The producer
    // writes tile t + kTileRecords's record with its Q, once the MMA warpgroups have read tile
    // t + 1's Q buffer to the end, i.e. finished tile t.
    static constexpr int kTileRecords = kQStages + 1;
    cute::array_aligned<Element, cosize_v<SmemLayoutQStages>, 1024> q;
    cute::array_aligned<Element, cosize_v<SmemLayoutK>, 1024> k;
    cute::array_aligned<Element, cosize_v<SmemLayoutV>, 1024> v;
    typename Pipeline::SharedStorage pipeline_k;
    typename Pipeline::SharedStorage pipeline_v;
    FwdTileInfo tile[kTileRecords];  // the producer evaluates the tile order and publishes each tile with its Q
    OStage o;  // the epilogue's O tile (kStagedEpilogue)
    OnesStage ones;  // the row-sum GEMM's B (kFixedOffsetSoftcap)
    alignas(8) uint64_t q_full[kQStages];   // Q buffer i holds its tile's Q (and the tile's record is valid)
    alignas(8) uint64_t q_empty[kQStages];  // the MMA warpgroups are done with Q buffer i
  };
  static constexpr int kSmemBytes = sizeof(SharedStorage);
  static_assert(kSmemBytes <= 227 * 1024, "shared memory budget exceeded (a second Q buffer: traits.py fwd_q_buffers)");
};

}  // namespace dash
