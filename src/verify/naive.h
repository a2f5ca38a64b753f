// The naive formula: the yardstick of the tolerance rule (tolerance.h). It is
// standard attention run in a low `precision`, rounding to it after each stage
// as PyTorch's math path (and FlashAttention's ref_lowp) does:
//
//   s   = rnd(rnd(q . k) * scale)                q . k accumulated in f32, like a GEMM
//   s   = rnd(c * rnd(tanh(rnd(s / c))))         softcap c > 0
//   s   = rnd(s + bias)
//   p   = rnd(exp(s - max) / sum)                softmax in f32 over the rounded scores
//   out = rnd(sum_j p_j * v_j)                   accumulated in f32
//   lse = max + log(sum)                         f32
//
// rnd() rounds to `precision` (identity for f32). Semantics are the contract's:
// a row with no visible key gives zeros and lse = -inf; a NaN score gives a NaN
// row. It runs on the pool of `ctx`, with its scratch from ctx's allocator.
#pragma once

#include "tessera/attention.h"
#include "tessera/context.h"

namespace tessera::verify {

// args: valid, f32 tensors whose innermost stride is 1 (logical_args() of a
// MaterializedCase), with out and lse present; writes out and lse.
Status naive_attention(const AttentionArgs& args, DType precision, Context& ctx);

}  // namespace tessera::verify
