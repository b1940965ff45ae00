// Small helpers the torch bindings of the forward and the backward share.
#pragma once

#include <cstdint>
#include <exception>
#include <stdexcept>

#include <torch/types.h>

#include "../dtype.h"

namespace dash {

// Returns t if TMA can read it as is (16-byte aligned base and strides), else a fresh
// contiguous copy, so unusual layouts cost a copy instead of an error. (A clone, not
// contiguous(): a contiguous view at an odd offset would come back unchanged.)
inline at::Tensor tma_compatible(at::Tensor const& t) {
  int64_t const elem = t.element_size();
  bool ok = reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
  for (int d = 0; d + 1 < t.dim(); ++d) { ok = ok && (t.stride(d) * elem) % 16 == 0; }
  return ok ? t : t.clone(at::MemoryFormat::Contiguous);
}

// (batch, row, head) strides of a (batch, seqlen, heads, head_dim) tensor, or of a packed
// (total, heads, head_dim) one (batch stride 0: every sequence is batch 0), in elements.
inline void get_strides(at::Tensor const& t, int64_t& batch, int64_t& row, int64_t& head) {
  bool const packed = t.dim() == 3;
  batch = packed ? 0 : t.stride(0);
  row = t.stride(packed ? 0 : 1);
  head = t.stride(packed ? 1 : 2);
}

inline DType dtype_of(at::Tensor const& t) { return t.scalar_type() == at::kBFloat16 ? DType::kBF16 : DType::kFP16; }

// Runs fn, turning the launch layer's exceptions into torch errors (ValueError for bad
// arguments, RuntimeError for CUDA failures).
template <class Fn>
auto with_torch_errors(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (std::invalid_argument const& e) {
    TORCH_CHECK_VALUE(false, e.what());
  } catch (std::exception const& e) {
    TORCH_CHECK(false, e.what());
  }
}

}  // namespace dash
