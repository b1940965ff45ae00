// How fast one SM runs WGMMA chains of a given shape, operands from shared memory (SS) or A
// from registers (RS), with one, two or three warpgroups issuing at once: the tile-shape
// question behind the backward's N = 64 GEMMs (S^T / dP^T of 64 x 64 tiles at hdim 128, dQ's
// 64-column slices), whose SS form reads 4 KB of smem per 32-cycle instruction.
//
// Each warpgroup of each CTA (one CTA per SM) runs `iters` GEMMs of 64 x N x 64 (four
// k16 instructions) into one accumulator, waiting for the previous GEMM before the next is
// issued (wait<1>: one in flight behind it), as the attention kernels do; the operands stay
// in place (their values do not matter). Prints FLOP per cycle per SM (dense bf16 peak: 4096
// on H100 / H200) and TFLOPS over the launch.
//
// "+ rowsum" rows: each GEMM is followed, in the same commit group and with the same A, by a
// 64 x 8 x 64 GEMM into a second accumulator (the fixed-offset softcap forward's row sums: P times
// a tile of ones beside P V, csrc/kernels/fwd/mainloop.h); FLOP counts the 64 x N GEMM alone, so
// the rate's drop against the plain row is what the narrow GEMM costs the tensor pipe.
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
//        -I$CUTLASS_PATH bench/wgmma_rate.cu -o wgmma_rate && ./wgmma_rate
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#include <cstdio>
#include <cute/tensor.hpp>
#include <cutlass/gemm/collective/builders/sm90_common.inl>

using namespace cute;
using T = cutlass::bfloat16_t;

template <int N, bool kRs, int kWgs, bool kRowSum>
__global__ void __launch_bounds__(128 * kWgs, 1) rate_kernel(long long* cycles, float* sink, int iters) {
  extern __shared__ __align__(1024) char smem[];
  using AtomA = decltype(cutlass::gemm::collective::detail::ss_smem_selector<GMMA::Major::K, T, Int<64>, Int<64>>());
  using AtomB = decltype(cutlass::gemm::collective::detail::ss_smem_selector<GMMA::Major::K, T, Int<N>, Int<64>>());
  using AtomSum = decltype(cutlass::gemm::collective::detail::ss_smem_selector<GMMA::Major::K, T, _8, Int<64>>());
  auto layout_a = tile_to_shape(AtomA{}, Shape<Int<64 * kWgs>, Int<64>>{});
  auto layout_b = tile_to_shape(AtomB{}, Shape<Int<N>, Int<64>>{});
  auto layout_sum = tile_to_shape(AtomSum{}, Shape<_8, Int<64>>{});
  T* a_ptr = reinterpret_cast<T*>(smem);
  T* b_ptr = a_ptr + cosize(layout_a);
  T* sum_ptr = b_ptr + cosize(layout_b);
  for (int i = threadIdx.x; i < cosize(layout_a) + cosize(layout_b) + cosize(layout_sum); i += blockDim.x) {
    a_ptr[i] = T(float(i % 7) * 0.01f);
  }
  __syncthreads();
  Tensor sA = make_tensor(make_smem_ptr(a_ptr), layout_a);
  Tensor sB = make_tensor(make_smem_ptr(b_ptr), layout_b);
  Tensor sSum = make_tensor(make_smem_ptr(sum_ptr), layout_sum);
  using Op = cute::conditional_t<kRs, decltype(GMMA::rs_op_selector<T, T, float, Shape<_64, Int<N>, _64>>()),
                                 decltype(GMMA::ss_op_selector<T, T, float, Shape<_64, Int<N>, _64>>())>;
  using OpSum = cute::conditional_t<kRs, decltype(GMMA::rs_op_selector<T, T, float, Shape<_64, _8, _64>>()),
                                    decltype(GMMA::ss_op_selector<T, T, float, Shape<_64, _8, _64>>())>;
  auto mma = make_tiled_mma(Op{}, Layout<Shape<Int<kWgs>, _1, _1>>{});
  auto mma_sum = make_tiled_mma(OpSum{}, Layout<Shape<Int<kWgs>, _1, _1>>{});
  auto thr = mma.get_thread_slice(threadIdx.x);
  Tensor acc = partition_fragment_C(mma, Shape<Int<64 * kWgs>, Int<N>>{});
  Tensor acc_sum = partition_fragment_C(mma_sum, Shape<Int<64 * kWgs>, _8>{});
  clear(acc);
  clear(acc_sum);
  Tensor tB = thr.partition_fragment_B(sB);
  Tensor tSum = mma_sum.get_thread_slice(threadIdx.x).partition_fragment_B(sSum);
  auto run = [&](auto& tA, auto& tA_sum) {
    long long const start = clock64();
    for (int i = 0; i < iters; ++i) {
      warpgroup_fence_operand(acc);
      if constexpr (kRowSum) { warpgroup_fence_operand(acc_sum); }
      warpgroup_arrive();
      gemm(mma, tA, tB, acc);
      if constexpr (kRowSum) { gemm(mma_sum, tA_sum, tSum, acc_sum); }
      warpgroup_commit_batch();
      warpgroup_wait<1>();
      warpgroup_fence_operand(acc);
      if constexpr (kRowSum) { warpgroup_fence_operand(acc_sum); }
    }
    warpgroup_wait<0>();
    long long const end = clock64();
    if (threadIdx.x % 128 == 0) { cycles[blockIdx.x * kWgs + threadIdx.x / 128] = end - start; }
  };
  if constexpr (kRs) {
    Tensor tA = thr.partition_fragment_A(sA);  // registers
    CUTE_UNROLL
    for (int i = 0; i < size(tA); ++i) { tA(i) = T(float(threadIdx.x % 5) * 0.01f); }
    run(tA, tA);  // the same registers as both GEMMs' A, as the kernel's P
  } else {
    Tensor tA = thr.partition_fragment_A(sA);  // smem descriptors
    Tensor tA_sum = mma_sum.get_thread_slice(threadIdx.x).partition_fragment_A(sA);
    run(tA, tA_sum);
  }
  float s = 0.f;
  CUTE_UNROLL
  for (int i = 0; i < size(acc); ++i) { s += acc(i); }
  CUTE_UNROLL
  for (int i = 0; i < size(acc_sum); ++i) { s += acc_sum(i); }
  if (s == 12345.f) { sink[threadIdx.x] = s; }
}

template <int N, bool kRs, int kWgs, bool kRowSum = false>
void measure(int sms, int iters) {
  int const smem = (64 * kWgs * 64 + N * 64 + 8 * 64) * int(sizeof(T)) + 1024;
  auto kernel = rate_kernel<N, kRs, kWgs, kRowSum>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  long long* cycles;
  float* sink;
  cudaMalloc(&cycles, sizeof(long long) * sms * kWgs);
  cudaMalloc(&sink, sizeof(float) * 512);
  kernel<<<sms, 128 * kWgs, smem>>>(cycles, sink, iters / 10);  // warm-up
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  kernel<<<sms, 128 * kWgs, smem>>>(cycles, sink, iters);
  cudaEventRecord(e1);
  cudaError_t const err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { printf("error %s\n", cudaGetErrorString(err)); exit(1); }
  float ms = 0.f;
  cudaEventElapsedTime(&ms, e0, e1);
  long long host[1024];
  cudaMemcpy(host, cycles, sizeof(long long) * sms * kWgs, cudaMemcpyDeviceToHost);
  double mean_cycles = 0;
  for (int i = 0; i < sms * kWgs; ++i) { mean_cycles += double(host[i]) / (sms * kWgs); }
  double const flop_per_wg = 2.0 * 64 * N * 64 * double(iters);
  printf("| %3d%s | %s | %d | %7.0f | %5.1f%% | %6.1f |\n", N, kRowSum ? " + rowsum" : "", kRs ? "RS" : "SS", kWgs,
         flop_per_wg * kWgs / mean_cycles, 100.0 * flop_per_wg * kWgs / mean_cycles / 4096.0,
         flop_per_wg * kWgs * sms / (ms * 1e-3) / 1e12);
  cudaFree(cycles);
  cudaFree(sink);
}

template <int N>
void measure_all(int sms, int iters) {
  measure<N, false, 1>(sms, iters);
  measure<N, false, 2>(sms, iters);
  measure<N, false, 3>(sms, iters);
  measure<N, true, 1>(sms, iters);
  measure<N, true, 2>(sms, iters);
  measure<N, true, 3>(sms, iters);
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int const iters = 20000;
  printf("SMs %d, %d GEMMs of 64 x N x 64 a warpgroup\n", sms, iters);
  printf("| N | A | warpgroups | FLOP / cycle / SM | of 4096 | TFLOPS |\n|---:|---|---:|---:|---:|---:|\n");
  measure_all<64>(sms, iters);
  measure_all<80>(sms, iters);
  measure_all<96>(sms, iters);
  measure_all<128>(sms, iters);
  measure_all<256>(sms, iters);
  // The fixed-offset softcap forward's P V GEMMs (RS, two warpgroups) with and without the row-sum
  // GEMM beside them, at d_v 128 and 192 (hdim 192 x 128 and 192), and N = 8 alone. (With the
  // row-sum GEMM, ptxas serializes this loop's wgmmas at N = 256 with two warpgroups and N = 64 with
  // three, C7512, so those are left out; the kernels themselves are not serialized.)
  measure<8, true, 2>(sms, iters);
  measure<128, true, 2, true>(sms, iters);
  measure<192, false, 2>(sms, iters);
  measure<192, true, 2>(sms, iters);
  measure<192, true, 2, true>(sms, iters);
  return 0;
}
