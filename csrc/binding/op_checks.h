// Argument checks shared by the CUDA and the not-CUDA registrations of the dash ops.
// Every unsupported input gets a ValueError / RuntimeError naming what is wrong and what
// is supported; nothing reaches a kernel unchecked.
#pragma once

#include <cmath>
#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime.h>
#include <torch/types.h>

#include "../generated/kernel_traits.h"
#include "../kernels/common/mask.h"

namespace dash {

struct BwdShape {
  int64_t batch, seqlen_q, seqlen_k, heads, heads_kv, head_dim, head_dim_v;
};

// head_dim: of q and k; head_dim_v: of v (and out, dout).
inline void check_head_dim(int64_t head_dim, int64_t head_dim_v, char const* op) {
  bool const in_range = head_dim > 0 && head_dim <= 1024 && head_dim_v > 0 && head_dim_v <= 1024;
  TORCH_CHECK_VALUE(in_range && head_dim_slot(int(head_dim), int(head_dim_v)) >= 0, op, ": head_dim ", head_dim,
                    head_dim_v == head_dim ? std::string() : c10::str(" with head_dim_v ", head_dim_v),
                    " is not supported; supported head dims are ", kSupportedHeadDimsText);
}

// The backward is compiled for fewer head dims than the forward (kernel_traits.h).
inline void check_bwd_head_dim(int64_t head_dim, int64_t head_dim_v, char const* op) {
  check_head_dim(head_dim, head_dim_v, op);
  TORCH_CHECK_NOT_IMPLEMENTED(has_bwd(int(head_dim), int(head_dim_v)), op, ": the backward for head_dim ", head_dim,
                              head_dim_v == head_dim ? std::string() : c10::str(" with head_dim_v ", head_dim_v),
                              " is not implemented yet (the forward is); backward head dims: ", kBwdHeadDimsText);
}

// GQA / MQA: the query heads split evenly over the K/V heads.
inline void check_head_counts(int64_t heads, int64_t heads_kv, char const* op) {
  TORCH_CHECK_VALUE(heads_kv >= 1 && heads % heads_kv == 0, op, ": q has ", heads,
                    " heads, which must be a multiple of the ", heads_kv, " heads of k and v (GQA / MQA)");
}

inline std::string sizes_str(at::Tensor const& t) { return c10::str(t.sizes()); }

inline void check_dtype_16bit(at::Tensor const& t, char const* name, char const* op = "dash.attn_bwd") {
  TORCH_CHECK_TYPE(t.scalar_type() == at::kBFloat16 || t.scalar_type() == at::kHalf,
                   op, ": ", name, " has dtype ", t.scalar_type(),
                   "; supported dtypes are torch.bfloat16 and torch.float16");
}

struct NamedTensor {
  at::Tensor const* t;
  char const* name;
};

// What the forward and the backward both take: q, k, v in the flash_attn_interface
// layout, a finite scale, a non-negative SM margin.
inline BwdShape check_qkv_args(char const* op, at::Tensor const& q, at::Tensor const& k, at::Tensor const& v,
                               double softmax_scale, int64_t sm_margin) {
  for (NamedTensor n : {NamedTensor{&q, "q"}, NamedTensor{&k, "k"}, NamedTensor{&v, "v"}}) {
    TORCH_CHECK_VALUE(n.t->dim() == 4, op, ": ", n.name,
                      " must be 4-D (batch, seqlen, heads, head_dim); got shape ", sizes_str(*n.t));
  }
  check_dtype_16bit(q, "q", op);
  for (NamedTensor n : {NamedTensor{&k, "k"}, NamedTensor{&v, "v"}}) {
    TORCH_CHECK_TYPE(n.t->scalar_type() == q.scalar_type(), op, ": ", n.name, " has dtype ", n.t->scalar_type(),
                     " but q has ", q.scalar_type(), "; all inputs must have the same dtype");
  }
  BwdShape s{q.size(0), q.size(1), k.size(1), q.size(2), k.size(2), q.size(3), v.size(3)};
  TORCH_CHECK_VALUE(k.size(3) == s.head_dim, op, ": q and k must have the same head_dim; got q ", sizes_str(q),
                    ", k ", sizes_str(k));
  check_head_dim(s.head_dim, s.head_dim_v, op);
  TORCH_CHECK_VALUE(s.batch >= 1 && s.heads >= 1 && s.seqlen_q >= 1 && s.seqlen_k >= 1, op,
                    ": batch, heads, seqlen_q and seqlen_k must all be >= 1; got q ", sizes_str(q), ", k ",
                    sizes_str(k));
  TORCH_CHECK_VALUE(k.size(0) == s.batch && v.size(0) == s.batch, op, ": batch mismatch: q ", sizes_str(q),
                    ", k ", sizes_str(k), ", v ", sizes_str(v));
  TORCH_CHECK_VALUE(v.size(2) == s.heads_kv, op, ": k and v must have the same number of heads; got k ",
                    sizes_str(k), ", v ", sizes_str(v));
  check_head_counts(s.heads, s.heads_kv, op);
  TORCH_CHECK_VALUE(v.size(1) == s.seqlen_k, op, ": k and v must have the same seqlen; got k ", sizes_str(k),
                    ", v ", sizes_str(v));
  for (NamedTensor n : {NamedTensor{&q, "q"}, NamedTensor{&k, "k"}, NamedTensor{&v, "v"}}) {
    TORCH_CHECK_VALUE(n.t->stride(3) == 1, op, ": ", n.name,
                      " must be contiguous in its last dim (head_dim); got strides ", c10::str(n.t->strides()));
  }
  TORCH_CHECK_VALUE(std::isfinite(softmax_scale), op, ": softmax_scale must be finite; got ", softmax_scale);
  TORCH_CHECK_VALUE(sm_margin >= 0, op, ": sm_margin must be >= 0; got ", sm_margin);
  // Index math in the kernels is 32-bit for tile and row counts (byte offsets are 64-bit).
  int64_t const rows = std::max(s.seqlen_q, s.seqlen_k) + 256;
  TORCH_CHECK_VALUE(s.batch * s.heads * rows < (int64_t(1) << 31), op,
                    ": batch * heads * seqlen is too large (must stay below 2^31)");
  return s;
}

inline BwdShape check_attn_bwd_args(at::Tensor const& dout, at::Tensor const& q, at::Tensor const& k,
                                    at::Tensor const& v, at::Tensor const& out,
                                    at::Tensor const& lse, double softmax_scale, int64_t sm_margin) {
  char const* op = "dash.attn_bwd";
  for (NamedTensor n : {NamedTensor{&dout, "dout"}, NamedTensor{&out, "out"}}) {
    TORCH_CHECK_VALUE(n.t->dim() == 4, op, ": ", n.name,
                      " must be 4-D (batch, seqlen, heads, head_dim); got shape ", sizes_str(*n.t));
  }
  TORCH_CHECK_VALUE(lse.dim() == 3, op, ": softmax_lse must be 3-D (batch, heads, seqlen_q); got shape ",
                    sizes_str(lse));
  BwdShape const s = check_qkv_args(op, q, k, v, softmax_scale, sm_margin);
  check_bwd_head_dim(s.head_dim, s.head_dim_v, op);
  for (NamedTensor n : {NamedTensor{&dout, "dout"}, NamedTensor{&out, "out"}}) {
    TORCH_CHECK_TYPE(n.t->scalar_type() == q.scalar_type(), op, ": ", n.name, " has dtype ",
                     n.t->scalar_type(), " but q has ", q.scalar_type(), "; all of q, k, v, out, dout must match");
  }
  TORCH_CHECK_TYPE(lse.scalar_type() == at::kFloat, op, ": softmax_lse must be float32; got ", lse.scalar_type());
  std::vector<int64_t> const out_shape{s.batch, s.seqlen_q, s.heads, s.head_dim_v};
  TORCH_CHECK_VALUE(out.sizes() == out_shape && dout.sizes() == out_shape, op,
                    ": out and dout must have shape (batch, seqlen_q, heads, head_dim_v) = ", c10::str(out_shape),
                    "; got out ", sizes_str(out), ", dout ", sizes_str(dout));
  TORCH_CHECK_VALUE(lse.size(0) == s.batch && lse.size(1) == s.heads && lse.size(2) == s.seqlen_q, op,
                    ": softmax_lse must have shape (batch, heads, seqlen_q) = (", s.batch, ", ", s.heads, ", ",
                    s.seqlen_q, "); got ", sizes_str(lse));
  for (NamedTensor n : {NamedTensor{&dout, "dout"}, NamedTensor{&out, "out"}}) {
    TORCH_CHECK_VALUE(n.t->stride(3) == 1, op, ": ", n.name,
                      " must be contiguous in its last dim (head_dim); got strides ", c10::str(n.t->strides()));
  }
  return s;
}

inline void check_cuda_and_hopper(at::Tensor const& q, std::initializer_list<at::Tensor const*> others,
                                  char const* op = "dash.attn_bwd") {
  TORCH_CHECK(q.is_cuda(), op, ": tensors must be on a CUDA device (an NVIDIA Hopper GPU); q is on ",
              q.device());
  for (at::Tensor const* t : others) {
    TORCH_CHECK(t->device() == q.device(), op, ": all tensors must be on ", q.device(),
                "; found one on ", t->device());
  }
  int major = 0, minor = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, q.get_device()));
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, q.get_device()));
  TORCH_CHECK(major == 9 && minor == 0, op, ": needs an sm_90 (Hopper: H100/H200) GPU; device ",
              q.get_device(), " is sm_", major, minor);
}

inline void check_trace_buffers(at::Tensor const& trace, at::Tensor const& count, at::Tensor const& q,
                                int64_t num_dq_tiles, int64_t num_n_blocks) {
  TORCH_CHECK_VALUE(trace.scalar_type() == at::kInt && count.scalar_type() == at::kInt,
                    "dash.attn_bwd: dq_trace and dq_trace_count must be int32");
  TORCH_CHECK_VALUE(trace.device() == q.device() && count.device() == q.device(),
                    "dash.attn_bwd: dq_trace buffers must be on q's device");
  TORCH_CHECK_VALUE(trace.is_contiguous() && count.is_contiguous(),
                    "dash.attn_bwd: dq_trace buffers must be contiguous");
  TORCH_CHECK_VALUE(trace.numel() == num_dq_tiles * num_n_blocks && count.numel() == num_dq_tiles,
                    "dash.attn_bwd: dq_trace must hold dQ tiles x KV tiles = ", num_dq_tiles * num_n_blocks,
                    " and dq_trace_count dQ tiles = ", num_dq_tiles, " int32 values (see dash.trace_buffers)");
}

// ---- packed (variable-length) calls ----

struct VarlenShape {
  int64_t batch, total_q, total_k, heads, heads_kv, head_dim, head_dim_v, max_seqlen_q, max_seqlen_k;
};

inline void check_cu_seqlens(char const* op, at::Tensor const& t, char const* name, at::Tensor const& q,
                             int64_t numel) {
  TORCH_CHECK_TYPE(t.scalar_type() == at::kInt, op, ": ", name, " must be int32; got ", t.scalar_type());
  TORCH_CHECK_VALUE(t.dim() == 1 && t.numel() == numel, op, ": ", name, " must be 1-D with ", numel,
                    " entries; got shape ", sizes_str(t));
  TORCH_CHECK_VALUE(t.device() == q.device(), op, ": ", name, " must be on q's device (", q.device(), "); it is on ",
                    t.device(), " (cu_seqlens are read by the kernels, without a host copy)");
}

// q (total_q, heads, d), k / v (total_k, heads_kv, d); cu_seqlens_q / _k int32 (batch + 1)
// on q's device; seqused_q / _k optional int32 (batch). What these checks cannot see
// without a device-to-host copy (cu_seqlens values, lengths against max_seqlen) the
// prepare kernel checks on the device (kernels/common/varlen_prepare.h).
inline VarlenShape check_varlen_qkv_args(char const* op, at::Tensor const& q, at::Tensor const& k,
                                         at::Tensor const& v, at::Tensor const& cu_seqlens_q,
                                         at::Tensor const& cu_seqlens_k, std::optional<at::Tensor> const& seqused_q,
                                         std::optional<at::Tensor> const& seqused_k, int64_t max_seqlen_q,
                                         int64_t max_seqlen_k, double softmax_scale, int64_t sm_margin) {
  for (NamedTensor n : {NamedTensor{&q, "q"}, NamedTensor{&k, "k"}, NamedTensor{&v, "v"}}) {
    TORCH_CHECK_VALUE(n.t->dim() == 3, op, ": ", n.name,
                      " must be 3-D (total_rows, heads, head_dim) for a variable-length batch; got shape ",
                      sizes_str(*n.t));
    TORCH_CHECK_VALUE(n.t->stride(2) == 1, op, ": ", n.name,
                      " must be contiguous in its last dim (head_dim); got strides ", c10::str(n.t->strides()));
  }
  check_dtype_16bit(q, "q", op);
  for (NamedTensor n : {NamedTensor{&k, "k"}, NamedTensor{&v, "v"}}) {
    TORCH_CHECK_TYPE(n.t->scalar_type() == q.scalar_type(), op, ": ", n.name, " has dtype ", n.t->scalar_type(),
                     " but q has ", q.scalar_type(), "; all inputs must have the same dtype");
  }
  VarlenShape s{cu_seqlens_q.numel() - 1, q.size(0), k.size(0), q.size(1), k.size(1), q.size(2), v.size(2),
                max_seqlen_q, max_seqlen_k};
  TORCH_CHECK_VALUE(k.size(0) == v.size(0) && k.size(1) == v.size(1), op,
                    ": k and v must have the same rows and heads; got k ", sizes_str(k), ", v ", sizes_str(v));
  TORCH_CHECK_VALUE(k.size(2) == s.head_dim, op, ": q and k must have the same head_dim; got q ", sizes_str(q),
                    ", k ", sizes_str(k));
  check_head_dim(s.head_dim, s.head_dim_v, op);
  TORCH_CHECK_VALUE(s.heads >= 1, op, ": q must have at least one head; got ", sizes_str(q));
  check_head_counts(s.heads, s.heads_kv, op);
  TORCH_CHECK_VALUE(cu_seqlens_q.dim() == 1 && cu_seqlens_q.numel() >= 2, op,
                    ": cu_seqlens_q must be 1-D with batch + 1 >= 2 entries; got shape ", sizes_str(cu_seqlens_q));
  check_cu_seqlens(op, cu_seqlens_q, "cu_seqlens_q", q, s.batch + 1);
  check_cu_seqlens(op, cu_seqlens_k, "cu_seqlens_k", q, s.batch + 1);
  if (seqused_q.has_value()) { check_cu_seqlens(op, *seqused_q, "seqused_q", q, s.batch); }
  if (seqused_k.has_value()) { check_cu_seqlens(op, *seqused_k, "seqused_k", q, s.batch); }
  TORCH_CHECK_VALUE(max_seqlen_q >= 0 && max_seqlen_k >= 0, op, ": max_seqlen_q and max_seqlen_k must be >= 0; got ",
                    max_seqlen_q, ", ", max_seqlen_k);
  TORCH_CHECK_VALUE(s.batch <= 48 * 1024, op, ": at most ", 48 * 1024, " sequences per call; got ", s.batch);
  TORCH_CHECK_VALUE(std::isfinite(softmax_scale), op, ": softmax_scale must be finite; got ", softmax_scale);
  TORCH_CHECK_VALUE(sm_margin >= 0, op, ": sm_margin must be >= 0; got ", sm_margin);
  // Row and tile indices are 32-bit (element offsets 64-bit): workspace rows are padded by
  // up to a tile per sequence.
  int64_t const rows = std::max({s.total_q, s.total_k, max_seqlen_q, max_seqlen_k}) + (s.batch + 2) * 256;
  TORCH_CHECK_VALUE(rows * std::max(s.heads, int64_t(1)) < (int64_t(1) << 31), op,
                    ": total rows (padded per sequence) * heads is too large (must stay below 2^31)");
  return s;
}

// The mask arguments every op takes, FlashAttention-3's causal, window_size = (left, right)
// and softcap: checked, then normalized by FlashAttention-3's rules (make_mask_window;
// seqlen_*: the call's, or packed the longest).
inline MaskWindow check_mask_args(char const* op, bool causal, int64_t window_left, int64_t window_right,
                                  double softcap, int64_t seqlen_q, int64_t seqlen_k) {
  int64_t const limit = int64_t(1) << 30;  // past every sequence: unbounded
  TORCH_CHECK_VALUE(std::isfinite(softcap) && softcap >= 0, op, ": softcap must be finite and >= 0 (0: off); got ",
                    softcap);
  auto clamp = [&](int64_t bound) { return bound < 0 ? -1 : int(std::min(bound, limit)); };
  return make_mask_window(causal, clamp(window_left), clamp(window_right), int(std::min(seqlen_q, limit)),
                          int(std::min(seqlen_k, limit)));
}

}  // namespace dash
