// Invalid calls: wrong shapes, Hq % Hkv != 0, bad cu_seqlens, null data, wrong
// dtypes, bad scalars. Each names the field its error message must mention.
#include <cmath>
#include <limits>

#include "verify/grid.h"

namespace tessera::verify {

namespace {

// Dense base: B=2, Sq=5, Sk=7, Hq=4, Hkv=2, D=16, with lse and a full bias.
AttentionCase dense_base() {
  AttentionCase c;
  c.batch = 2;
  c.sq = 5;
  c.sk = 7;
  c.hq = 4;
  c.hkv = 2;
  c.d = c.dv = 16;
  c.lse = true;
  c.bias = BiasKind::kFull;
  c.seed = stable_hash("invalid.dense");
  return c;
}

// Varlen base: sequences of 3 and 4 queries over 5 and 2 keys, with lse.
AttentionCase varlen_base() {
  AttentionCase c;
  c.hq = c.hkv = 2;
  c.d = c.dv = 16;
  c.lse = true;
  c.set_varlen({3, 4}, {5, 2});
  c.seed = stable_hash("invalid.varlen");
  return c;
}

using Args = AttentionArgs;

}  // namespace

std::vector<InvalidCase> invalid_cases() {
  const AttentionCase dense = dense_base();
  const AttentionCase varlen = varlen_base();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  return {
      {"q_rank3", dense, "q must have rank 4", [](Args& a, int32_t*, int32_t*) { a.q.rank = 3; }},
      {"k_head_dim_differs", dense, "k.shape[3]",
       [](Args& a, int32_t*, int32_t*) { a.k.shape[3] += 1; }},
      {"v_seq_len_differs", dense, "v.shape[1]",
       [](Args& a, int32_t*, int32_t*) { a.v.shape[1] -= 1; }},
      {"out_heads_differ", dense, "out.shape[2]",
       [](Args& a, int32_t*, int32_t*) { a.out.shape[2] += 1; }},
      {"hq_not_multiple_of_hkv", dense, "Hq % Hkv",
       [](Args& a, int32_t*, int32_t*) { a.k.shape[2] = a.v.shape[2] = 3; }},
      {"lse_seq_len_differs", dense, "lse.shape[2]",
       [](Args& a, int32_t*, int32_t*) { a.lse.shape[2] += 1; }},
      {"bias_not_broadcastable", dense, "bias.shape[3]",
       [](Args& a, int32_t*, int32_t*) { a.bias.shape[3] = 2; }},
      {"q_data_null", dense, "q.data is null",
       [](Args& a, int32_t*, int32_t*) { a.q.data = nullptr; }},
      {"v_data_null", dense, "v.data is null",
       [](Args& a, int32_t*, int32_t*) { a.v.data = nullptr; }},
      {"out_data_null", dense, "out.data is null",
       [](Args& a, int32_t*, int32_t*) { a.out.data = nullptr; }},
      {"k_dtype_differs", dense, "k.dtype",
       [](Args& a, int32_t*, int32_t*) { a.k.dtype = DType::kBF16; }},
      {"out_dtype_differs", dense, "out.dtype",
       [](Args& a, int32_t*, int32_t*) { a.out.dtype = DType::kF16; }},
      {"lse_dtype_f16", dense, "lse.dtype",
       [](Args& a, int32_t*, int32_t*) { a.lse.dtype = DType::kF16; }},
      {"bias_dtype_bf16", dense, "bias.dtype",
       [](Args& a, int32_t*, int32_t*) { a.bias.dtype = DType::kBF16; }},
      {"out_zero_stride", dense, "out.strides",
       [](Args& a, int32_t*, int32_t*) { a.out.strides[1] = 0; }},
      {"softcap_negative", dense, "softcap",
       [](Args& a, int32_t*, int32_t*) { a.softcap = -1.0f; }},
      {"scale_nan", dense, "scale", [nan](Args& a, int32_t*, int32_t*) { a.scale = nan; }},
      {"window_below_minus_one", dense, "mask window",
       [](Args& a, int32_t*, int32_t*) { a.mask = Mask::window(-2, 0); }},
      {"cu_seqlens_q_null", varlen, "cu_seqlens_q is null",
       [](Args& a, int32_t*, int32_t*) { a.varlen->cu_seqlens_q = nullptr; }},
      {"cu_seqlens_k_decreasing", varlen, "cu_seqlens_k decreases",
       [](Args&, int32_t*, int32_t* ck) { ck[1] = ck[2] + 1; }},
      {"cu_seqlens_q_not_from_zero", varlen, "cu_seqlens_q[0]",
       [](Args&, int32_t* cq, int32_t*) { cq[0] = 1; }},
      {"cu_seqlens_q_total_differs", varlen, "cu_seqlens_q[2]",
       [](Args&, int32_t* cq, int32_t*) { cq[2] -= 1; }},
      {"varlen_batch_zero", varlen, "varlen.batch",
       [](Args& a, int32_t*, int32_t*) { a.varlen->batch = 0; }},
  };
}

}  // namespace tessera::verify
