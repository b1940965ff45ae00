// torch.ops.dash._occupy_sms(num_ctas, milliseconds): launches, on the current stream,
// num_ctas CTAs that each hold (almost) all of an SM's shared memory for `milliseconds`.
// Only for tests of the deterministic kernel's behaviour next to other work.
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include "../kernels/common/occupy_sms.h"

namespace dash {
namespace {

void occupy_sms(int64_t num_ctas, int64_t milliseconds) {
  TORCH_CHECK_VALUE(num_ctas >= 1 && milliseconds >= 0, "dash._occupy_sms: need num_ctas >= 1, milliseconds >= 0");
  int device = 0;
  C10_CUDA_CHECK(cudaGetDevice(&device));
  int smem_per_sm = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&smem_per_sm, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  C10_CUDA_CHECK(cudaFuncSetAttribute(occupy_sms_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_per_sm));
  occupy_sms_kernel<<<int(num_ctas), 32, smem_per_sm, c10::cuda::getCurrentCUDAStream().stream()>>>(
      uint64_t(milliseconds) * 1000000ull);
  C10_CUDA_CHECK(cudaGetLastError());
}

}  // namespace
}  // namespace dash

TORCH_LIBRARY_FRAGMENT(dash, m) { m.def("_occupy_sms(int num_ctas, int milliseconds) -> ()"); }
TORCH_LIBRARY_IMPL(dash, CompositeExplicitAutograd, m) { m.impl("_occupy_sms", &dash::occupy_sms); }
