// The registry of compiled instantiations, shared by the forward and the backward. Each
// csrc/instantiations/*.cu registers its entry at load time under its KernelKey, so a
// build may compile a subset (DASH_INSTANTIATIONS) and a call for a missing combination
// gets an error that names it. Slots come from the trait table (kernel_traits.h).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "../dtype.h"
#include "../generated/kernel_traits.h"
#include "../kernels/common/mask.h"

namespace dash {

struct KernelKey {
  int head_dim;    // of q and k
  int head_dim_v;  // of v and out
  DType dtype;
  MaskKind mask;
  bool softcap;  // for calls with softcap > 0 (a forward kernel serving plain and softcap calls is
                 // registered under both keys: traits.py PASSES, generate.py fwd_kernel_scores)
  bool short_walk = false;  // the forward's short-walk kernel (its own tile: traits.py "fwd_short")
};

inline char const* dtype_name(DType dtype) { return dtype == DType::kBF16 ? "bfloat16" : "float16"; }
inline char const* mask_name(MaskKind mask) { return mask == MaskKind::kBand ? "band" : "full"; }

inline std::string describe_dims(KernelKey const& key) {
  return key.head_dim == key.head_dim_v
             ? "head_dim " + std::to_string(key.head_dim)
             : "head_dim " + std::to_string(key.head_dim) + " with head_dim_v " + std::to_string(key.head_dim_v);
}

inline std::string describe(KernelKey const& key) {
  return describe_dims(key) + ", " + dtype_name(key.dtype) + ", " + mask_name(key.mask) +
         " mask" + (key.softcap ? ", softcap" : "") + (key.short_walk ? ", short-walk tile" : "");
}

// Entry: a struct of function pointers whose first member `launch` is null when empty.
template <class Entry>
class KernelRegistry {
 public:
  // pass_name: "forward" / "backward", for the error messages.
  explicit KernelRegistry(char const* pass_name) : pass_name_(pass_name) {}

  bool add(KernelKey const& key, Entry const& entry) {
    int const slot = head_dim_slot(key.head_dim, key.head_dim_v);
    if (slot < 0) { return false; }
    table_[slot][int(key.dtype)][int(key.mask)][int(key.softcap)][int(key.short_walk)] = entry;
    return true;
  }

  // Whether this build compiled key's entry (false for an unsupported key too).
  bool contains(KernelKey const& key) const {
    int const slot = head_dim_slot(key.head_dim, key.head_dim_v);
    return slot >= 0 && table_[slot][int(key.dtype)][int(key.mask)][int(key.softcap)][int(key.short_walk)].launch != nullptr;
  }

  // The entry for key; throws std::invalid_argument naming what is unsupported or absent.
  Entry const& find(KernelKey const& key) const {
    int const slot = head_dim_slot(key.head_dim, key.head_dim_v);
    if (slot < 0) {
      throw std::invalid_argument("dash: " + describe_dims(key) + " is not supported by the " + pass_name_ +
                                  " kernel (supported: " + kSupportedHeadDimsText + ")");
    }
    Entry const& entry = table_[slot][int(key.dtype)][int(key.mask)][int(key.softcap)][int(key.short_walk)];
    if (entry.launch == nullptr) {
      throw std::invalid_argument(std::string("dash: this build has no ") + pass_name_ + " kernel for " +
                                  describe(key) + " (it was built with a restricted DASH_INSTANTIATIONS)");
    }
    return entry;
  }

  // The keys with a compiled entry, in table order.
  std::vector<KernelKey> keys() const {
    std::vector<KernelKey> out;
    for (int s = 0; s < kNumHeadDims; ++s) {
      for (int d = 0; d < 2; ++d) {
        for (int m = 0; m < kNumMaskKinds; ++m) {
          for (int c = 0; c < 2; ++c) {
            for (int w = 0; w < 2; ++w) {
              if (table_[s][d][m][c][w].launch != nullptr) {
                out.push_back(KernelKey{kHeadDimPairs[s].qk, kHeadDimPairs[s].v, DType(d), MaskKind(m), c != 0, w != 0});
              }
            }
          }
        }
      }
    }
    return out;
  }

 private:
  char const* pass_name_;
  Entry table_[kNumHeadDims][2][kNumMaskKinds][2][2] = {};
};

}  // namespace dash
