#include "model/bert_layer.h"

#include <algorithm>
#include <array>
#include <string>

#include "model/kernels.h"
#include "model/stage_span.h"
#include "runtime/gemm.h"

namespace tessera::model {

namespace {

// y[T, n] = epilogue(x[T, k] W^T), W: [n, k] (PyTorch Linear layout), packed f32 or bf16.
Status project(Context& ctx, const LayerScratch& s, const std::string& stage, const float* x,
               int64_t tokens, const PackedWeights& w, const LinearEpilogue& epilogue, float* y) {
  const bool bf16 = w.type() == WeightType::kBf16;
  StageSpan span(ctx.profiler(), stage,
                 "M=" + std::to_string(tokens) + ",N=" + std::to_string(w.n()) +
                     ",K=" + std::to_string(w.k()) + (bf16 ? ",W=bf16" : ""),
                 2.0 * tokens * w.n() * w.k());
  Status st =
      linear(ctx.pool(), tokens, x, w, epilogue, y, s.gemm_workspace, s.gemm_workspace_bytes);
  span.set_ok(st.ok());
  return st;
}

// The four products of a layer with the epilogues run_bert_layer gives them.
struct Projection {
  const PackedWeights* w;
  LinearEpilogue epilogue;
};

std::array<Projection, 4> projections(const LayerWeights& w) {
  return {Projection{&w.qkv_w, {w.qkv_b, false, false}},
          Projection{&w.attn_out_w, {w.attn_out_b, false, true}},
          Projection{&w.ffn_in_w, {w.ffn_in_b, true, false}},
          Projection{&w.ffn_out_w, {w.ffn_out_b, false, true}}};
}

}  // namespace

Status bert_layer_gemm_workspace(const LayerWeights& w, int64_t tokens, int threads, size_t* out) {
  *out = 0;
  for (const Projection& p : projections(w)) {
    size_t bytes = 0;
    TESSERA_RETURN_IF_ERROR(linear_workspace_bytes(threads, tokens, *p.w, p.epilogue, &bytes));
    *out = std::max(*out, bytes);
  }
  return Status::Ok();
}

Status run_bert_layer(int index, const LayerWeights& w, const BertConfig& c,
                      const PackedBatch& batch, const LayerScratch& s, Dispatcher& attention,
                      Context& ctx) {
  const int64_t t = batch.tokens, h = c.hidden_size;
  const int64_t heads = c.num_attention_heads, dh = c.head_dim();
  const float eps = c.layer_norm_eps;
  const std::string name = "model.layer" + std::to_string(index) + ".";
  ThreadPool& pool = ctx.pool();

  const std::array<Projection, 4> proj = projections(w);
  // QKV: wide[T, 3H] = hidden Wqkv^T + bqkv.
  TESSERA_RETURN_IF_ERROR(
      project(ctx, s, name + "qkv_gemm", s.hidden, t, *proj[0].w, proj[0].epilogue, s.wide));

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

  // hidden = LN(hidden + context Wo^T + bo): the residual add and the bias
  // happen in the product's epilogue, the LayerNorm in place.
  TESSERA_RETURN_IF_ERROR(project(ctx, s, name + "attn_out_gemm", s.context, t, *proj[1].w,
                                  proj[1].epilogue, s.hidden));
  {
    StageSpan span(ctx.profiler(), name + "attn_norm");
    for_row_blocks(pool, t, 2 * h, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        layer_norm_row(s.hidden + r * h, w.ln1_gamma, w.ln1_beta, eps, h);
      }
    });
  }

  // Feed-forward: wide[T, I] = gelu(hidden W1^T + b1) (GELU in the epilogue);
  // hidden = LN(hidden + wide W2^T + b2).
  TESSERA_RETURN_IF_ERROR(
      project(ctx, s, name + "ffn_in_gemm", s.hidden, t, *proj[2].w, proj[2].epilogue, s.wide));
  TESSERA_RETURN_IF_ERROR(
      project(ctx, s, name + "ffn_out_gemm", s.wide, t, *proj[3].w, proj[3].epilogue, s.hidden));
  {
    StageSpan span(ctx.profiler(), name + "ffn_norm");
    for_row_blocks(pool, t, 2 * h, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        layer_norm_row(s.hidden + r * h, w.ln2_gamma, w.ln2_beta, eps, h);
      }
    });
  }
  return Status::Ok();
}

}  // namespace tessera::model
