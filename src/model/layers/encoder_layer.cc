#include "model/layers/encoder_layer.h"

#include <algorithm>
#include <array>
#include <string>

#include "model/kernels.h"
#include "model/stage_span.h"
#include "runtime/gemm.h"

namespace tessera::model {

namespace {

// The four products of a layer with the epilogues run_encoder_layer gives them,
// and their activations' types. With bf16 weights the products that feed
// attention or the FFN's second product write bf16, and those two read it:
// QKV, attention's output and the FFN's inner activations stay bf16 in memory
// (half the traffic, no conversion pass); the residual stream (hidden), the
// LayerNorms and softmax's statistics stay f32.
struct Projection {
  const PackedWeights* w;
  LinearEpilogue epilogue;
  LinearTypes types;
};

DType activation_type(const LayerWeights& w) {
  return w.qkv_w.type() == WeightType::kBf16 ? DType::kBF16 : DType::kF32;
}

std::array<Projection, 4> projections(const LayerWeights& w) {
  const DType a = activation_type(w), f32 = DType::kF32;
  return {Projection{&w.qkv_w, {w.qkv_b, false, false}, {f32, a}},
          Projection{&w.attn_out_w, {w.attn_out_b, false, true}, {a, f32}},
          Projection{&w.ffn_in_w, {w.ffn_in_b, true, false}, {f32, a}},
          Projection{&w.ffn_out_w, {w.ffn_out_b, false, true}, {a, f32}}};
}

// y[T, n] = epilogue(x[T, k] W^T), W: [n, k] (PyTorch Linear layout), packed f32 or bf16.
Status project(Context& ctx, const LayerScratch& s, const std::string& stage, const void* x,
               int64_t tokens, const Projection& p, void* y) {
  const PackedWeights& w = *p.w;
  std::string shape =
      "M=" + std::to_string(tokens) + ",N=" + std::to_string(w.n()) + ",K=" + std::to_string(w.k());
  if (w.type() == WeightType::kBf16) shape += ",W=bf16";
  if (p.types.x == DType::kBF16) shape += ",x=bf16";
  if (p.types.y == DType::kBF16) shape += ",y=bf16";
  StageSpan span(ctx.profiler(), stage, shape, 2.0 * tokens * w.n() * w.k());
  Status st = linear(ctx.pool(), tokens, p.types, x, w, p.epilogue, y, s.gemm_workspace,
                     s.gemm_workspace_bytes);
  span.set_ok(st.ok());
  return st;
}

}  // namespace

Status encoder_layer_gemm_workspace(const LayerWeights& w, int64_t tokens, int threads,
                                    size_t* out) {
  *out = 0;
  for (const Projection& p : projections(w)) {
    size_t bytes = 0;
    TESSERA_RETURN_IF_ERROR(
        linear_workspace_bytes(threads, tokens, *p.w, p.epilogue, &bytes, p.types));
    *out = std::max(*out, bytes);
  }
  return Status::Ok();
}

Status run_encoder_layer(int index, const LayerWeights& w, const NetworkConfig& c,
                         const PackedBatch& batch, const LayerScratch& s, Dispatcher& attention,
                         Context& ctx) {
  const int64_t t = batch.tokens, h = c.hidden_size;
  const int64_t heads = c.num_attention_heads, dh = c.head_dim();
  const float eps = c.layer_norm_eps;
  const std::string name = "model.layer" + std::to_string(index) + ".";
  ThreadPool& pool = ctx.pool();

  const std::array<Projection, 4> proj = projections(w);
  // QKV: wide[T, 3H] = hidden Wqkv^T + bqkv.
  TESSERA_RETURN_IF_ERROR(project(ctx, s, name + "qkv_gemm", s.hidden, t, proj[0], s.wide));

  // Attention over views into the QKV rows: [1, T, heads, dh], row stride 3H
  // (elements of the activations' type: wide and context hold bf16 values in
  // the first half of their bytes when the weights are bf16).
  AttentionArgs args;
  const DType a = activation_type(w);
  const size_t esize = dtype_size(a);
  auto view = [&](void* buffer, int64_t element_offset, int64_t row_stride) {
    TensorView v;
    v.data = static_cast<char*>(buffer) + element_offset * static_cast<int64_t>(esize);
    v.dtype = a;
    v.rank = 4;
    v.shape = {1, t, heads, dh};
    v.strides = {t * row_stride, row_stride, dh, 1};
    return v;
  };
  args.q = view(s.wide, 0, 3 * h);
  args.k = view(s.wide, h, 3 * h);
  args.v = view(s.wide, 2 * h, 3 * h);
  args.out = view(s.context, 0, h);
  args.varlen = Varlen{batch.cu_seqlens, batch.cu_seqlens, batch.count};
  args.bias = batch.attention_bias;
  TESSERA_RETURN_IF_ERROR(attention.run(args, ctx));

  // hidden = LN(hidden + context Wo^T + bo): the residual add and the bias
  // happen in the product's epilogue, the LayerNorm in place.
  TESSERA_RETURN_IF_ERROR(project(ctx, s, name + "attn_out_gemm", s.context, t, proj[1], s.hidden));
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
  TESSERA_RETURN_IF_ERROR(project(ctx, s, name + "ffn_in_gemm", s.hidden, t, proj[2], s.wide));
  TESSERA_RETURN_IF_ERROR(project(ctx, s, name + "ffn_out_gemm", s.wide, t, proj[3], s.hidden));
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
