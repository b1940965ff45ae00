// torch.ops.dash.capabilities(): what this library supports and what this build compiled,
// as JSON, so Python (dash/capabilities.py) asks the library instead of repeating lists.
//   {"traits": <the trait table: head_dims, dtypes, masks, features, fwd_tile, bwd_tile>,
//    "compiled": {"fwd": [[head_dim, head_dim_v, dtype, mask, kind], ...], "bwd": [...]}}
// (kind: "plain"; "softcap", the backward's capped-score kernels; "short", the forward's
// short-walk kernels)
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
           mask_name(keys[i].mask) + "\", \"" + (keys[i].softcap ? "softcap" : keys[i].short_walk ? "short" : "plain") + "\"]";
  }
  return out + "]";
}

std::string capabilities() {
  return std::string("{\"traits\": ") + kTraitsJson + ", \"compiled\": {\"fwd\": " +
         keys_json(compiled_fwd_kernels()) + ", \"bwd\": " + keys_json(compiled_bwd_kernels()) + "}}";
}

}  // namespace
}  // namespace dash

TORCH_LIBRARY_FRAGMENT(dash, m) { m.def("capabilities() -> str", &dash::capabilities); }
