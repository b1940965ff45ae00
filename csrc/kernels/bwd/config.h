// Compile-time configuration of the sm90 backward kernel for one (head dims, dtype, mask):
// tile shape, the three tiled WGMMAs, shared-memory layouts and the shared storage.
//
// Shape of the work: one CTA owns a KV tile (kBlockN rows of K and V) and keeps its dK
// and dV in registers while it walks over Q tiles (kBlockM rows). The MMA warpgroups (two;
// three where the trait table says "bwd_warpgroups") share each GEMM; how is the trait
// table's "bwd_split" (kSplit below). Up to head dim 128
// they split the KV rows in half for S^T, dP^T, dK and dV, so each warpgroup owns the same
// 64 KV rows throughout and can feed P^T and dS^T from registers into the dV / dK GEMMs:
//
//   S^T  = K  Q^T    (kBlockN x kBlockM)  SS-GEMM, split over warpgroups along KV rows
//   dP^T = V  dO^T   (kBlockN x kBlockM)  SS-GEMM, same split
//   dV  += P^T dO    (kBlockN x d_v)      RS-GEMM, A = P^T from registers
//   dK  += dS^T Q    (kBlockN x d)        RS-GEMM, A = dS^T from registers
//   dQ_i = dS K      (kBlockM x d)        SS-GEMM, A = dS from smem; the partial that is
//                                         reduced into dq_accum
// (d: head_dim of Q and K; d_v: head_dim_v of V, dO and dV.) Past head dim 128 the warpgroups
// split the keys as columns of S instead (kKvCols) and pass P and dS through smem.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/gemm/collective/builders/sm90_common.inl>
#include <cutlass/numeric_types.h>

#include "../../attn_bwd_params.h"
#include "../../generated/wgmma_wide.h"
#include "../common/mask.h"
#include "../common/register_split.h"
#include "../common/seq_geometry.h"
#include "../common/tma_pipeline.h"

namespace dash {

using namespace cute;

// A task as the producer publishes it to the MMA warpgroups: a KV tile of one K/V head of
// one sequence, and its number of steps (Q tiles x query heads of the group); num_steps < 0
// ends the kernel.
struct BwdTaskInfo {
  SeqInfo seq;
  int n_block, kv_head, part, num_steps;
};

// Where each dQ partial goes (one record per step, in order), worked out by the producer
// so the dQ writer, which sits on the critical path of the semaphore chain, does no index
// math: the dQ tile (SeqGeometry::dq_tile), its rank in the tile's order and the KV tile
// (for the trace). dq_tile < 0 ends the kernel.
struct BwdDqMeta {
  int dq_tile, rank, n_block;
};

// A step's Q tile and whether its (Q tile, KV tile) pair needs the element mask
// (SeqTiles::partial), worked out by the producer: the MMA warpgroups then choose the
// softmax's path with one flag they load with the Q tile, instead of the band's tile test
// between the S GEMM and the exponentials (bench/RESULTS.md item 101).
struct BwdStepTile {
  int m_block;
  int masked;
};

// Named barriers of the backward kernel (hardware ids 0..15; 0 is __syncthreads). Ids 2..15:
// CUTLASS reserves 1..7 only for its own collectives, none of which run here, and the dQ
// staging buffers need two ids per (buffer, MMA warpgroup): BwdDqWriter::full_barrier /
// empty_barrier, from kDqFirst.
enum class BwdBarrier : int {
  kDsStoredFirst = 2,  // 2..5 (kDqWaitsByKeys): one warpgroup's dS of a step is in smem, per
                       // (warpgroup, Q stage); kDsReady otherwise
  kDsFree = 6,   // one dS buffer (kStagesDs == 1): every MMA warpgroup is done with the last step's
  kDsReady = 7,  // every MMA warpgroup has written its slice of dS to smem
  kDqFirst = 8,
};
constexpr int kNumHardwareBarriers = 16;

template <int kHeadDim_, int kHeadDimV_, class Element_, class Mask_, bool kSoftcap_ = false>
struct BwdConfig {
  using Element = Element_;
  using ElementAccum = float;
  using Mask = Mask_;
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kHeadDimV = kHeadDimV_;
  static constexpr bool kBanded = Mask::kBanded;
  static constexpr bool kSoftcap = kSoftcap_;  // scores capped (score_scale.h): its own instantiation
  static_assert(has_bwd(kHeadDim, kHeadDimV), "no backward for these head dims in the trait table");

  // How the MMA warpgroups share a task's work (the trait table's "bwd_split"):
  //   kKvRows (d <= 128): each owns 64 KV rows of S^T, dP^T, dK and dV, and feeds P^T and dS^T
  //     from its registers into the dV / dK GEMMs;
  //   kKvCols (d > 128): each owns kBlockN / W keys (W MMA warpgroups): its columns of
  //     S = Q K^T and dP = dO V^T (64 query rows, the GEMMs' M), and of dV^T += dO^T P, whose M
  //     is the head dim, so kBlockN only has to be a multiple of 8 W (the 64 KV rows of kKvRows,
  //     d + d_v fp32 values a row, do not fit in a thread's registers past 128, and kHeadDim's
  //     64 keys a tile spend a 48 KB dQ partial per 6.8 MFLOP at d = 192). dK^T += Q^T dS (and
  //     dV^T) is split the same way where its head dim is not a multiple of 64 W; else each owns
  //     d / W of its head-dim rows (whole 64-row atoms) over all keys (kDkvByHeadDim): a W-th
  //     of the A operand each and an N of kBlockN, where a split by keys would read all of
  //     Q^T for a narrow N (an SS-GEMM bound by smem reads).
  // The trait table picks per head dim (bench/RESULTS.md items 50, 70; 256 split dK / dV along the head
  // dim on 64 x 64 tiles until kKvCols on 64 x 80 ran faster, item 308).
  // With kKvCols, P and dS go through smem (each warpgroup's GEMMs read the other's) and there
  // is one dQ staging buffer (two writers share it in deterministic mode, below). Where the
  // trait table says so, deterministic=False calls run the deterministic order too (the
  // bindings, bwd_orders_both_modes).
  static constexpr BwdSplit kSplit = bwd_split(kHeadDim, kHeadDimV);
  static constexpr bool kKvCols = kSplit == BwdSplit::kKvCols;  // S, dK^T, dV^T instead of S^T, dK, dV
  static constexpr bool kPdsInSmem = kKvCols;
  static_assert(kPdsInSmem || kHeadDimV == kHeadDim, "the KV-row split assumes head_dim_v == head_dim");

  static constexpr int kBlockM = bwd_tile_shape(kHeadDim, kHeadDimV, kSoftcap).block_m;
  static constexpr int kBlockN = bwd_tile_shape(kHeadDim, kHeadDimV, kSoftcap).block_n;
  // Pipeline depths of Q/LSE and of dO/D, and dS (and P) smem buffers: each two where it fits
  // beside K, V and the dQ staging buffers (227 KB), decided in this order. Q first: its stage
  // is read first in a step and released last (after the dK GEMM), so with one stage every
  // step waits for a whole Q load. Then the dS buffers: with one, every step starts with a
  // barrier of all MMA warpgroups (kDsFree). dO last: its stage is released after the dV GEMM,
  // mid-step, and its next tile is needed only after the next S GEMM (bench/RESULTS.md
  // items 77, 79).
  static constexpr int kDqBuffers = kPdsInSmem ? 1 : 2;
  static constexpr int smem_bytes(int q_stages, int do_stages, int ds_buffers, int pds_arrays = kPdsInSmem ? 2 : 1) {
    return (kBlockN * (kHeadDim + kHeadDimV) + kBlockM * (q_stages * kHeadDim + do_stages * kHeadDimV) +
            ds_buffers * pds_arrays * kBlockM * kBlockN) * int(sizeof(Element)) +
           kDqBuffers * kBlockM * kHeadDim * int(sizeof(float));
  }
  static constexpr int kSmemDataLimit = 225 * 1024;  // the rest: row statistics, barriers, alignment
  // Past kKvRows P and dS each take a buffer, or, where two do not fit beside K, V, one Q and one dO stage and the
  // dQ staging buffer (256 on 64 x 80 tiles), one buffer in turn: P, then dS once every warpgroup's dV GEMM has
  // read P (bwd/mainloop.h).
  static constexpr bool kPdsShareBuffer = kPdsInSmem && smem_bytes(1, 1, 1) > kSmemDataLimit;
  static constexpr int kPdsArrays = kPdsInSmem && !kPdsShareBuffer ? 2 : 1;
  static constexpr int kStagesQ = smem_bytes(2, 1, 1, kPdsArrays) <= kSmemDataLimit ? 2 : 1;
  static constexpr int kStagesDs = smem_bytes(kStagesQ, 1, 2, kPdsArrays) <= kSmemDataLimit ? 2 : 1;
  static constexpr int kStagesDo = smem_bytes(kStagesQ, 2, kStagesDs, kPdsArrays) <= kSmemDataLimit ? 2 : 1;
  static_assert(!kPdsShareBuffer || kStagesDs == 1, "P and dS share one buffer");
  // The trait table's "bwd_last_gemm": "dq" issues the dK GEMM before the dQ GEMM, so the Q stage (dK is
  // its last reader) is released while the dQ GEMM runs and its partial is handed over, and the next Q
  // load starts earlier; "dk" (default) issues the dQ GEMM first, so its partial reaches the dQ writer
  // while dK runs.
  static constexpr bool kDqGemmLast = bwd_dq_gemm_last(kHeadDim, kHeadDimV, kSoftcap);
  // Diagonal's tail dealt longest first ("bwd_tail"; bwd/producer.h), else its code compiled out.
  static constexpr bool kTailLongestFirst = bwd_tail_longest_first(kHeadDim, kHeadDimV);
  // With "dq" the Q stage is released before the step's dQ hand-off, which then reads the stage's record of
  // its dQ buffer (SharedStorage::dq_buffer): the producer may already have written step t + kStagesQ's
  // there, which names the same buffer where kStagesQ is a multiple of kDqBuffers (a step's buffer is
  // step % kDqBuffers, or 0: dq_writer.h buffer_of).
  static_assert(!kDqGemmLast || kStagesQ % kDqBuffers == 0,
                "bwd_last_gemm dq: the steps of a Q stage must share a dQ buffer");
  // The trait table's "bwd_dq_wait": each MMA warpgroup's dQ GEMM starts on its own keys' dS and
  // waits for the other warpgroup's only before the other half (bwd/mainloop.h). Its barriers
  // (one per warpgroup and Q stage) rely on two Q stages and the dS buffer being the Q stage's.
  static constexpr bool kDqWaitsByKeys = bwd_dq_waits_by_keys(kHeadDim, kHeadDimV);
  static constexpr int kNumMmaWarpGroups = bwd_mma_warpgroups(kHeadDim, kHeadDimV);
  static_assert(kNumMmaWarpGroups == 2 || (kNumMmaWarpGroups == 3 && kKvCols && kBlockM == 64),
                "three MMA warpgroups only split S's keys (kv_cols) of 64-row Q tiles");
  static_assert(kBlockN % (8 * kNumMmaWarpGroups) == 0 || !kKvCols, "kv_cols: a multiple of 8 keys a warpgroup");
  static_assert(!(kDqWaitsByKeys && kDqGemmLast), "bwd_dq_wait by_keys: the dQ GEMM's two halves come before dK");
  static_assert(!kDqWaitsByKeys || (!kPdsInSmem && kNumMmaWarpGroups == 2 && kStagesQ == 2 && kStagesDs == 2),
                "bwd_dq_wait by_keys: the KV-row split, two MMA warpgroups, two Q stages and dS buffers");
  // kKvCols: dK^T (kCols = d) or dV^T (d_v) split along the head dim in whole 64-row atoms (above);
  // otherwise by keys.
  template <int kCols>
  static constexpr bool kDkvByHeadDim = kKvCols && kCols % (64 * kNumMmaWarpGroups) == 0;
  static constexpr int kNumMmaThreads = kNumMmaWarpGroups * 128;
  static constexpr int kNumThreads = kNumMmaThreads + 128;  // + producer warpgroup
  // Softcap's dS needs d(capped)/d(scaled) = 1 - t^2 of every S entry; the P pass folds it into P,
  // converting P to 16 bits there (bwd/mainloop.h), so a thread holds its S^T fragment in fp32 and
  // in 16 bits at once, while dP's GEMM holds its accumulator. With 64 entries a thread (hdim 64's
  // 128 x 128 tile) that is 224 of the MMA warps' 240 registers at the end of the P pass, and D,
  // read there in the other kernels so that its loads overlap dP's GEMM, spilled: those kernels read
  // D once dP has landed.
  static constexpr bool kReadDLate = kSoftcap && kBlockM * kBlockN / kNumMmaThreads > 32;
  // The trait table's "bwd_mask" (the softcap kernels': their "bwd_softcap" block's, per mask): the step
  // compiled once for masked and once for unmasked steps (bwd/mainloop.h).
  static constexpr bool kMaskTwoBodies = bwd_mask_two_bodies(kHeadDim, kHeadDimV, kSoftcap, kBanded);
  // How the warpgroups split S^T / dP^T: along KV rows (M) (kKvCols: S / dP along KV columns, N).
  static constexpr int kSdpWarpGroupsN = kKvCols ? kNumMmaWarpGroups : 1;
  // The trait table's producer registers ("bwd_producer_registers", the softcap kernels' own where
  // given), the MMA warpgroups the rest.
  using Registers = RegisterSplit<kNumMmaWarpGroups, bwd_producer_registers(kHeadDim, kHeadDimV, kSoftcap)>;
  static constexpr int kProducerRegisters = Registers::kProducer;
  static constexpr int kMmaRegisters = Registers::kMma;

  // Each selector gets one warpgroup's share of the tile. S^T and dP^T (kKvCols: S and dP)
  // share one tiled MMA (their reduction extents, d and d_v, only set how many k-blocks a GEMM
  // issues).
  using ShareSdp = cute::conditional_t<kKvCols, Shape<Int<kBlockM>, Int<kBlockN / kNumMmaWarpGroups>, Int<kHeadDim>>,
                                       Shape<Int<kBlockN / kNumMmaWarpGroups>, Int<kBlockM>, Int<kHeadDim>>>;
  using AtomLayoutSdp = Layout<Shape<Int<kNumMmaWarpGroups / kSdpWarpGroupsN>, Int<kSdpWarpGroupsN>, _1>>;
  // An SS GEMM whose warpgroup share is N wide as one instruction: CuTe's, or where its selector knows no
  // instruction that wide (its base widths only), the generated one (generated/wgmma_wide.h).
  template <class CuteOp, int kN, GMMA::Major kMajorA, GMMA::Major kMajorB>
  using OneSsInstruction = cute::conditional_t<size<1>(typename MMA_Traits<CuteOp>::Shape_MNK{}) == kN, CuteOp,
                                               WideSsWgmma<kN, Element, kMajorA, kMajorB>>;
  using TiledMmaSdP = decltype(make_tiled_mma(
      OneSsInstruction<decltype(GMMA::ss_op_selector<Element, Element, ElementAccum, ShareSdp>()),
                       decltype(size<1>(ShareSdp{}))::value, GMMA::Major::K, GMMA::Major::K>{},
      AtomLayoutSdp{}));
  // The trait table's "bwd_dp_v": "registers": dP^T = V dO^T takes each warpgroup's KV rows of V
  // from registers, loaded once a task, so the step's GEMMs read a V tile less from smem (whose
  // reads bound a KV-row step at hdim 96: bench/RESULTS.md item 282); else the S^T GEMM's SS op.
  static constexpr bool kDpVInRegisters = bwd_dp_v_in_registers(kHeadDim, kHeadDimV);
  static_assert(!kDpVInRegisters || kSplit == BwdSplit::kKvRows, "bwd_dp_v registers: V is dP^T's A only in kv_rows");
  using TiledMmadP = cute::conditional_t<
      kDpVInRegisters,
      decltype(make_tiled_mma(GMMA::rs_op_selector<Element, Element, ElementAccum, ShareSdp>(), AtomLayoutSdp{})),
      TiledMmaSdP>;
  // dK (n = d) and dV (n = d_v), or with kKvCols dK^T (m = d) and dV^T (m = d_v): the same
  // split (but kDkvByHeadDim), each with its own column count. kKvCols reads both operands
  // MN-major from smem: Q^T / dO^T (head dim contiguous) and dS / P (keys contiguous).
  static constexpr int kWg = kNumMmaWarpGroups;
  template <int kCols, bool kByHeadDim>
  using ShareDkv = cute::conditional_t<
      kKvCols,
      cute::conditional_t<kByHeadDim, Shape<Int<kCols / kWg>, Int<kBlockN>, Int<kBlockM>>,
                          Shape<Int<kCols>, Int<kBlockN / kWg>, Int<kBlockM>>>,
      Shape<Int<kBlockN / kWg>, Int<kCols>, Int<kBlockM>>>;
  // Warpgroups along (M, N) of a dK / dV GEMM: the split dimension is M for kKvRows and for
  // dK^T by head dim, N otherwise.
  template <bool kByHeadDim>
  using AtomLayoutDkv = cute::conditional_t<(!kKvCols || kByHeadDim),
                                            Layout<Shape<Int<kWg>, _1, _1>>, Layout<Shape<_1, Int<kWg>, _1>>>;
  template <int kCols, bool kByHeadDim = false>
  using TiledMmaDkvCols = decltype(make_tiled_mma(
      cute::conditional_t<kPdsInSmem,
                          OneSsInstruction<decltype(GMMA::ss_op_selector<Element, Element, ElementAccum,
                                                                         ShareDkv<kCols, kByHeadDim>,
                                                                         GMMA::Major::MN, GMMA::Major::MN>()),
                                           decltype(size<1>(ShareDkv<kCols, kByHeadDim>{}))::value,
                                           GMMA::Major::MN, GMMA::Major::MN>,
                          decltype(GMMA::rs_op_selector<Element, Element, ElementAccum, ShareDkv<kCols, kByHeadDim>,
                                                        GMMA::Major::K, GMMA::Major::MN>())>{},
      AtomLayoutDkv<kByHeadDim>{}));
  using TiledMmadK = TiledMmaDkvCols<kHeadDim, kDkvByHeadDim<kHeadDim>>;
  using TiledMmadV = TiledMmaDkvCols<kHeadDimV, kDkvByHeadDim<kHeadDimV>>;
  // Shapes of the dK / dV accumulators (kKvCols: transposed).
  template <int kCols>
  using DkvShape = cute::conditional_t<kKvCols, Shape<Int<kCols>, Int<kBlockN>>, Shape<Int<kBlockN>, Int<kCols>>>;
  // dQ = dS K: each warpgroup's kBlockM / kDqWarpGroupsM rows by kDqCols of the head dim, as one WGMMA
  // instruction as wide as kDqCols. The trait table gives kDqCols (generate.py bwd_dq_cols, which also
  // writes the instructions CuTe lacks); the warpgroups left over by the head dim's kHeadDim / kDqCols
  // shares split the tile's rows, 64 each. CuTe's selector knows the base widths only (the units do not
  // compile its extended shapes); where it would split kDqCols into narrower instructions, each
  // reading the same block of dS from smem again (hdim 96's 48 columns ran as three 16-wide ones:
  // bench/RESULTS.md item 291), the generated instruction takes its place (generated/wgmma_wide.h).
  static constexpr int kDqCols = bwd_dq_cols(kHeadDim, kHeadDimV, kSoftcap);
  static constexpr int kDqWarpGroupsM = kNumMmaWarpGroups * kDqCols / kHeadDim;
  static_assert(kDqCols > 0 && kHeadDim % kDqCols == 0 && kDqWarpGroupsM * (kHeadDim / kDqCols) == kNumMmaWarpGroups &&
                    kBlockM == 64 * kDqWarpGroupsM,
                "dQ GEMM: the trait table's width (bwd_dq_cols) does not split the tile over the warpgroups");
  // The trait table's "bwd_dq_slices": a warpgroup's share issued as this many instructions, one after the
  // other into the same accumulator registers, each handed to the staging buffer before the next (256 on
  // 64 x 80 tiles, where dK^T and dV^T take 160 registers a thread). The tiled MMA covers one slice of every
  // warpgroup, so a warpgroup's slices are every kDqSliceCols-th block of the head dim, and partition_C over
  // the whole tile (the postprocess's fragment order) gives a thread its slices one after the other.
  static constexpr int kDqSlices = bwd_dq_slices(kHeadDim, kHeadDimV);
  static constexpr int kDqSliceCols = kDqCols / kDqSlices;
  static_assert(kDqCols % kDqSlices == 0 && (kDqSlices == 1 || !kDqWaitsByKeys),
                "dQ GEMM slices: whole instructions, over every key");
  using CuteOpDq = decltype(GMMA::ss_op_selector<Element, Element, ElementAccum,
                                                 Shape<Int<kBlockM / kDqWarpGroupsM>, Int<kDqSliceCols>, Int<kBlockN>>,
                                                 GMMA::Major::K, GMMA::Major::MN>());
  using OpDq = cute::conditional_t<size<1>(typename MMA_Traits<CuteOpDq>::Shape_MNK{}) == kDqSliceCols, CuteOpDq,
                                   WideSsWgmma<kDqSliceCols, Element, GMMA::Major::K, GMMA::Major::MN>>;
  using TiledMmadQ = decltype(make_tiled_mma(
      OpDq{}, Layout<Shape<Int<kDqWarpGroupsM>, Int<kNumMmaWarpGroups / kDqWarpGroupsM>, _1>>{}));
  static_assert(size<1>(typename TiledMmadQ::AtomShape_MNK{}) == kDqSliceCols, "dQ GEMM: WGMMA N != a slice");
  // Every other GEMM of the step is one instruction wide as well: a warpgroup's N of S^T / dP^T and of
  // dK / dV is a base width at every pair of the table (a narrower instruction would read its A again).
  static_assert(size<1>(typename TiledMmaSdP::AtomShape_MNK{}) == size<1>(ShareSdp{}), "S / dP GEMM split in N");
  static_assert(size<1>(typename TiledMmadP::AtomShape_MNK{}) == size<1>(ShareSdp{}), "dP GEMM split in N");
  static_assert(size<1>(typename TiledMmadK::AtomShape_MNK{}) ==
                    size<1>(ShareDkv<kHeadDim, kDkvByHeadDim<kHeadDim>>{}), "dK GEMM split in N");
  static_assert(size<1>(typename TiledMmadV::AtomShape_MNK{}) ==
                    size<1>(ShareDkv<kHeadDimV, kDkvByHeadDim<kHeadDimV>>{}), "dV GEMM split in N");

  // ---- shared memory layouts (K-major as loaded by TMA) ----
  // The swizzle atom of Q, dO, K and V must tile each warpgroup's share of the head dim, which
  // the dK / dV / dQ GEMMs address as an MN-major operand of its own: past kKvRows the dQ GEMM
  // splits K^T's head dim over the warpgroups, 96 columns at d = 192 with two, which take
  // 64B-swizzle atoms (32 columns); otherwise 128B (64 columns). (A head dim that the
  // warpgroups do not split, d_v = 128 with three, is not shared.)
  template <int kCols>
  static constexpr int kColsShare = kPdsInSmem && kCols % kWg == 0 ? kCols / kWg : kCols;
  // (rows, cols, stages) of a per-step tile (Q: d columns; dO: d_v), K-major as TMA loads it,
  // and the same bytes seen as (cols, rows, stages): the MN-major B operand of the dK / dV GEMMs.
  template <int kCols, int kStages>
  using SmemLayoutStep = decltype(tile_to_shape(
      cutlass::gemm::collective::detail::ss_smem_selector<GMMA::Major::K, Element, Int<kBlockM>,
                                                           Int<kColsShare<kCols>>>(),
      make_shape(Int<kBlockM>{}, Int<kCols>{}, Int<kStages>{})));
  template <int kCols, int kStages>
  using SmemLayoutStepT = decltype(composition(
      SmemLayoutStep<kCols, kStages>{}, make_layout(make_shape(Int<kCols>{}, Int<kBlockM>{}, Int<kStages>{}),
                                                    make_stride(Int<kBlockM>{}, _1{}, Int<kBlockM * kCols>{}))));
  using SmemLayoutQ = SmemLayoutStep<kHeadDim, kStagesQ>;
  using SmemLayoutdO = SmemLayoutStep<kHeadDimV, kStagesDo>;
  using SmemLayoutQt = SmemLayoutStepT<kHeadDim, kStagesQ>;
  using SmemLayoutdOt = SmemLayoutStepT<kHeadDimV, kStagesDo>;

  // (kBlockN, cols) of a task's K (d columns) or V (d_v), K-major, in swizzle atoms that tile kAtomCols.
  // K's: the dQ GEMM's share of the head dim, kDqCols (K^T is its MN-major B; 48 at hdim 96, whose
  // 32-byte atoms are 16 columns). V is read K-major only.
  template <int kCols, int kAtomCols>
  using SmemLayoutKvTile = decltype(tile_to_shape(
      cutlass::gemm::collective::detail::ss_smem_selector<GMMA::Major::K, Element, Int<kBlockN>, Int<kAtomCols>>(),
      make_shape(Int<kBlockN>{}, Int<kCols>{})));
  using SmemLayoutK = SmemLayoutKvTile<kHeadDim, kDqSliceCols>;
  using SmemLayoutV = SmemLayoutKvTile<kHeadDimV, kColsShare<kHeadDimV>>;
  // K seen as (d, kBlockN): the MN-major B operand of the dQ GEMM.
  using SmemLayoutKt = decltype(composition(
      SmemLayoutK{}, make_layout(make_shape(Int<kHeadDim>{}, Int<kBlockN>{}),
                                 make_stride(Int<kBlockN>{}, _1{}))));

  // dS as (kBlockM, kBlockN), kv contiguous: the K-major A operand of the dQ GEMM (kKvCols: and,
  // as (kBlockN, kBlockM), the MN-major B operand of the dK^T GEMM; P likewise for dV^T).
  using SmemAtomDs = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                              GMMA::Major::K, Element, Int<kBlockM>, Int<kBlockN / (kKvCols ? kWg : 2)>>());
  using SmemLayoutDs = decltype(tile_to_shape(
      SmemAtomDs{}, make_shape(Int<kBlockM>{}, Int<kBlockN>{}, Int<kStagesDs>{})));
  // dS^T view (kBlockN, kBlockM): where the warpgroups store their dS^T accumulators.
  using SmemLayoutDsT = decltype(composition(
      SmemLayoutDs{}, make_layout(make_shape(Int<kBlockN>{}, Int<kBlockM>{}, Int<kStagesDs>{}),
                                  make_stride(Int<kBlockM>{}, _1{}, Int<kBlockM * kBlockN>{}))));

  // Registers -> smem for dS^T: the accumulator pairs run along q, which is the strided
  // dim of dS in smem, hence the transposing stmatrix (kKvCols: dS itself, pairs along kv).
  using SmemCopyAtomDs = Copy_Atom<
      cute::conditional_t<kKvCols,
                          cute::conditional_t<(kBlockN / kWg) % 16 == 0, SM90_U32x4_STSM_N, SM90_U32x2_STSM_N>,
                          SM90_U16x8_STSM_T>,
      Element>;

  // dQ partial staging: one buffer per MMA warpgroup, each thread's accumulator stored as
  // float4s interleaved across the warpgroup ("fragment order"); dq_accum in global memory
  // uses the same order per tile, so the reduction is one contiguous bulk add per buffer.
  static constexpr int kDqElemsPerWarpGroup = kBlockM * kHeadDim / kNumMmaWarpGroups;
  static constexpr int kDqElemsPerThread = kDqElemsPerWarpGroup / 128;
  static_assert(kDqElemsPerThread % 4 == 0);
  // dQ staging buffers (kDqBuffers, above): in deterministic mode step t's partial goes to
  // buffer t % 2, so the MMA warpgroups can hand over step t + 1 while step t's add still waits
  // for its turn (two writer warps; see bwd/dq_writer.h); otherwise every step uses buffer 0.
  // Past kKvRows there is room for one, which two writers share in deterministic mode (taking
  // alternate steps, so one's wait for its add to land overlaps the other's next step).
  static constexpr int kDqWriters = 2;  // writer warps in deterministic mode

  static constexpr uint32_t kTmaBytesQ = kBlockM * kHeadDim * sizeof(Element);
  static constexpr uint32_t kTmaBytesdO = kBlockM * kHeadDimV * sizeof(Element);
  static constexpr uint32_t kTmaBytesKV = kBlockN * (kHeadDim + kHeadDimV) * sizeof(Element);  // K and V
  static constexpr uint32_t kBytesRowStats = kBlockM * sizeof(float);  // one LSE / D tile
  static constexpr int kDqMetaRing = 8;
  static_assert(kDqMetaRing >= kStagesQ + kDqWriters + (kDqGemmLast ? 3 : 2),
                "the dQ writers' ring must cover their lag");

  // Two pipelines, one step a stage, each with its own depth: Q + LSE (+ the Q tile index and
  // dQ buffer, written by the producer) and dO + D.
  using PipelineQ = TmaPipeline<kStagesQ>;
  using PipelineDo = TmaPipeline<kStagesDo>;

  struct SharedStorage {
    cute::array_aligned<Element, cosize_v<SmemLayoutK>, 1024> k;
    cute::array_aligned<Element, cosize_v<SmemLayoutV>, 1024> v;
    cute::array_aligned<Element, cosize_v<SmemLayoutQ>, 1024> q;
    cute::array_aligned<Element, cosize_v<SmemLayoutdO>, 1024> dout;
    cute::array_aligned<Element, cosize_v<SmemLayoutDs>, 1024> ds;
    // P (as dS) for the dV GEMM (past kKvRows; kKvRows feeds it from registers).
    cute::conditional_t<kPdsArrays == 2, cute::array_aligned<Element, cosize_v<SmemLayoutDs>, 1024>,
                        cute::array<Element, 0>> p;
    cute::array_aligned<float, kDqBuffers * kBlockM * kHeadDim, 128> dq;
    cute::array_aligned<float, kBlockM * kStagesQ, 128> lse_log2;
    cute::array_aligned<float, kBlockM * kStagesDo, 128> dpsum;
    typename PipelineQ::SharedStorage pipeline_q;
    typename PipelineDo::SharedStorage pipeline_do;
    // The producer warp is the only one that evaluates the schedule; it publishes what
    // the other warps need alongside the data: the task (with kv_full), the Q tile of each
    // stage (with the stage's full barrier) and, for the dQ writers, a ring of per-step
    // records. The producer writes step t's record once the MMA warpgroups have freed the
    // Q stage of step t - kStagesQ, i.e. after handing over that step's dQ partial, which
    // waited for its buffer's writer to read step t - kStagesQ - kDqBuffers (t - kStagesQ - 1
    // with one buffer). Both writers are then past the records of steps
    // < t - kStagesQ - kDqWriters + 1, so a ring of kStagesQ + kDqWriters + 2 slots never
    // overwrites a record still to be read. With kDqGemmLast the stage is freed before that step's
    // hand-off, so the writers may be a step further behind: one slot more.
    BwdTaskInfo task_info;
    BwdStepTile q_tile[kStagesQ];  // of the Q stage's step
    int dq_buffer[kStagesQ];       // dQ staging buffer of the Q stage's step
    int dq_closing[kDqWriters];    // buffers that carry the closing records to the dQ writers, -1: none
    BwdDqMeta dq_meta[kDqMetaRing];
    alignas(8) uint64_t kv_full;   // K and V of the current KV tile have landed
    // Counter-dealt calls: the Q stream has published the next task record (before its K and
    // V land): the dO stream's cue (bwd/producer.h).
    alignas(8) uint64_t task_ready;
    alignas(8) uint64_t kv_empty;  // the MMA warpgroups are done reading K and V
    // Counter-dealt calls: 1 + the ordinal of the last task without steps whose record the dO
    // producer warp has read (bwd/producer.h: kv_empty does not wait for that warp there).
    int do_records_read;
  };
  static constexpr int kSmemBytes = sizeof(SharedStorage);
  static_assert(kSmemBytes <= 227 * 1024, "shared memory budget exceeded");
};

}  // namespace dash
