// torch.ops.dash.capabilities(): what this library supports and what this build compiled,
// as JSON, so Python (dash/capabilities.py) asks the library instead of repeating lists.
//   {"traits": <the trait table: head_dims, dtypes, masks, features, fwd_tile, bwd_tile>,
//    "compiled": {"fwd": [[head_dim, head_dim_v, dtype, mask, kind], ...], "bwd": [...]}}
// (kind: "plain"; "softcap", the backward's capped-score kernels; "short", the forward's
// short-walk kernels), and torch.ops.dash.fwd_takes_short_walk(...): which forward kernel a call runs.
#include <string>
#include <vector>

#include <torch/library.h>

#include "../generated/kernel_traits.h"
#include "../launch/bwd_registry.h"
#include "../launch/fwd_registry.h"

namespace dash {
namespace {

std::string keys_json(std::vector<KernelKey> const& keys) {
  std::string out = "[";
  for (size_t i = 0; i < keys.size(); ++i) {
    out += (i ? ", [" : "[") + std::to_string(keys[i].head_dim) + ", " + std::to_string(keys[i].head_dim_v) + ", \"" + dtype_name(keys[i].dtype) + "\", \"" +
           mask_name(keys[i].mask) + "\", \"" + (keys[i].short_walk ? (keys[i].softcap ? "short_softcap" : "short") : keys[i].softcap ? "softcap" : "plain") + "\"]";
  }
  return out + "]";
}

std::string capabilities() {
  return std::string("{\"traits\": ") + kTraitsJson + ", \"compiled\": {\"fwd\": " +
         keys_json(compiled_fwd_kernels()) + ", \"bwd\": " + keys_json(compiled_bwd_kernels()) + "}}";
}

// Whether a forward call with these head dims, dtype, mask and keys runs the short-walk kernel:
// the rule the op itself applies (fwd_registry.cpp), so Python asks instead of repeating it.
bool takes_short_walk(int64_t head_dim, int64_t head_dim_v, c10::ScalarType dtype, bool banded, int64_t seqlen_k,
                      bool softcap) {
  TORCH_CHECK(dtype == c10::kBFloat16 || dtype == c10::kHalf, "dash: dtype must be bfloat16 or float16, got ", dtype);
  return fwd_takes_short_walk(int(head_dim), int(head_dim_v), dtype == c10::kBFloat16 ? DType::kBF16 : DType::kFP16,
                              banded, seqlen_k, softcap);
}

}  // namespace
}  // namespace dash

TORCH_LIBRARY_FRAGMENT(dash, m) {
  m.def("capabilities() -> str", &dash::capabilities);
  m.def("fwd_takes_short_walk(int head_dim, int head_dim_v, ScalarType dtype, bool banded, int seqlen_k, "
        "bool softcap=False) -> bool",
        &dash::takes_short_walk);
}
