#include "model/bert_layer.h"

#include <algorithm>
#include <string>

#include "model/kernels.h"
#include "model/stage_span.h"
#include "runtime/gemm.h"

namespace tessera::model {

namespace {

// y[T, n] = x[T, k] W^T, W: [n, k] (PyTorch Linear layout), f32 or bf16.
// Bias is added by the elementwise stage that follows.
Status linear(Context& ctx, const LayerScratch& s, const std::string& stage, const float* x,
              int64_t tokens, int64_t k, const LinearWeight& w, int64_t n, float* y, int64_t ldy) {
  const bool bf16 = !w.bf16.empty();
  StageSpan span(ctx.profiler(), stage,
                 "M=" + std::to_string(tokens) + ",N=" + std::to_string(n) +
                     ",K=" + std::to_string(k) + (bf16 ? ",W=bf16" : ""),
                 2.0 * tokens * n * k);
  const Status st = bf16 ? gemm_bf16_weights(tokens, x, k, w.bf16, y, ldy, s.gemm_workspace,
                                             s.gemm_workspace_bytes)
                         : sgemm(false, true, tokens, n, k, 1.0f, x, k, w.f32, k, 0.0f, y, ldy);
  span.set_ok(st.ok());
  return st;
}

}  // namespace

Status bert_layer_gemm_workspace(const LayerWeights& w, int64_t tokens, size_t* out) {
  *out = 0;
  for (const LinearWeight* l : {&w.qkv_w, &w.attn_out_w, &w.ffn_in_w, &w.ffn_out_w}) {
    if (l->bf16.empty()) continue;
    size_t bytes = 0;
    // As linear() calls it: x and y dense (ldx = k, ldy = n).
    TESSERA_RETURN_IF_ERROR(
        gemm_bf16_workspace_bytes(tokens, l->bf16.k(), l->bf16, l->bf16.n(), &bytes));
    *out = std::max(*out, bytes);
  }
  return Status::Ok();
}

Status run_bert_layer(int index, const LayerWeights& w, const BertConfig& c,
                      const PackedBatch& batch, const LayerScratch& s, Dispatcher& attention,
                      Context& ctx) {
  const int64_t t = batch.tokens, h = c.hidden_size, inter = c.intermediate_size;
  const int64_t heads = c.num_attention_heads, dh = c.head_dim();
  const float eps = c.layer_norm_eps;
  const std::string name = "model.layer" + std::to_string(index) + ".";
  ThreadPool& pool = ctx.pool();

  // QKV: wide[T, 3H] = hidden Wqkv^T + bqkv.
  TESSERA_RETURN_IF_ERROR(
      linear(ctx, s, name + "qkv_gemm", s.hidden, t, h, w.qkv_w, 3 * h, s.wide, 3 * h));
  {
    StageSpan span(ctx.profiler(), name + "qkv_bias");
    for_row_blocks(pool, t, 3 * h, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) add_bias_row(s.wide + r * 3 * h, w.qkv_b, 3 * h);
    });
  }

  // Attention over views into the QKV rows: [1, T, heads, dh], row stride 3H.
  AttentionArgs args;
  auto view = [&](float* base, int64_t row_stride) {
    TensorView v;
    v.data = base;
    v.dtype = DType::kF32;
    v.rank = 4;
    v.shape = {1, t, heads, dh};
    v.strides = {t * row_stride, row_stride, dh, 1};
    return v;
  };
  args.q = view(s.wide, 3 * h);
  args.k = view(s.wide + h, 3 * h);
  args.v = view(s.wide + 2 * h, 3 * h);
  args.out = view(s.context, h);
  args.varlen = Varlen{batch.cu_seqlens, batch.cu_seqlens, batch.count};
  TESSERA_RETURN_IF_ERROR(attention.run(args, ctx));

  // Output projection into the (now free) QKV buffer, then add & norm.
  TESSERA_RETURN_IF_ERROR(
      linear(ctx, s, name + "attn_out_gemm", s.context, t, h, w.attn_out_w, h, s.wide, h));
  {
    StageSpan span(ctx.profiler(), name + "attn_add_norm");
    for_row_blocks(pool, t, 2 * h, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        add_bias_residual_layer_norm_row(s.hidden + r * h, s.wide + r * h, w.attn_out_b,
                                         w.ln1_gamma, w.ln1_beta, eps, h);
      }
    });
  }

  // Feed-forward: wide[T, I] = gelu(hidden W1^T + b1); context = wide W2^T.
  TESSERA_RETURN_IF_ERROR(
      linear(ctx, s, name + "ffn_in_gemm", s.hidden, t, h, w.ffn_in_w, inter, s.wide, inter));
  {
    StageSpan span(ctx.profiler(), name + "gelu");
    for_row_blocks(pool, t, 8 * inter, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) bias_gelu_row(s.wide + r * inter, w.ffn_in_b, inter);
    });
  }
  TESSERA_RETURN_IF_ERROR(
      linear(ctx, s, name + "ffn_out_gemm", s.wide, t, inter, w.ffn_out_w, h, s.context, h));
  {
    StageSpan span(ctx.profiler(), name + "ffn_add_norm");
    for_row_blocks(pool, t, 2 * h, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        add_bias_residual_layer_norm_row(s.hidden + r * h, s.context + r * h, w.ffn_out_b,
                                         w.ln2_gamma, w.ln2_beta, eps, h);
      }
    });
  }
  return Status::Ok();
}

}  // namespace tessera::model
