#include "model/layers/layer_parts.h"

#include <array>

#include "model/kernels.h"
#include "model/layers/gated_activation.h"
#include "model/stage_span.h"
#include "runtime/cpu_kind.h"
#include "runtime/gemm.h"

namespace tessera::model {

namespace {

// One product with its epilogue and its activations' types. With bf16
// weights the products that feed attention or the FFN's second product
// write bf16, and those two read it.
struct Projection {
  const PackedWeights* w;
  LinearEpilogue epilogue;
  LinearTypes types;
};

// bf16 weights: bf16 activations. int8 weights: bf16 where the CPU kind's
// bf16 attention was measured faster than its f32 (AVX512_BF16 on AMD:
// cpu.flash's bf16 dot products; docs/DECISIONS.md, "int8 weights"), f32
// elsewhere (unmeasured there).
DType activation_type(const LayerWeights& w) {
  const WeightType t = w.qkv_w.type();
  if (t == WeightType::kBf16) return DType::kBF16;
  if (t == WeightType::kInt8 && cpu_kind() == CpuKind::kAvx512Bf16Amd) return DType::kBF16;
  return DType::kF32;
}

// qkv, attention output, FFN in, FFN out.
std::array<Projection, 4> projections(const LayerWeights& w, const NetworkConfig& c) {
  const DType a = activation_type(w), f32 = DType::kF32;
  const bool gelu_epilogue = !c.gated_mlp;  // a gated FFN applies its activation in its own pass
  return {Projection{&w.qkv_w, {w.qkv_b, false, false}, {f32, a}},
          Projection{&w.attn_out_w, {w.attn_out_b, false, true}, {a, f32}},
          Projection{&w.ffn_in_w, {w.ffn_in_b, gelu_epilogue, false}, {f32, a}},
          Projection{&w.ffn_out_w, {w.ffn_out_b, false, true}, {a, f32}}};
}

// y[T, n] = epilogue(x[T, k] W^T), W: [n, k] (PyTorch Linear layout), packed f32, bf16 or
// int8.
Status project(const LayerRun& run, const char* part, const void* x, const Projection& p, void* y) {
  const PackedWeights& w = *p.w;
  const int64_t tokens = run.batch->tokens;
  std::string shape =
      "M=" + std::to_string(tokens) + ",N=" + std::to_string(w.n()) + ",K=" + std::to_string(w.k());
  if (w.type() == WeightType::kBf16) shape += ",W=bf16";
  if (w.type() == WeightType::kInt8) shape += ",W=int8";
  if (p.types.x == DType::kBF16) shape += ",x=bf16";
  if (p.types.y == DType::kBF16) shape += ",y=bf16";
  StageSpan span(run.ctx->profiler(), run.stage(part), shape, 2.0 * tokens * w.n() * w.k());
  const LayerScratch& s = *run.scratch;
  Status st = linear(run.ctx->pool(), tokens, p.types, x, w, p.epilogue, y, s.gemm_workspace,
                     s.gemm_workspace_bytes);
  span.set_ok(st.ok());
  return st;
}

}  // namespace

Status layer_gemm_workspace(const LayerWeights& w, const NetworkConfig& c, int64_t tokens,
                            int threads, size_t* out) {
  *out = 0;
  for (const Projection& p : projections(w, c)) {
    size_t bytes = 0;
    TESSERA_RETURN_IF_ERROR(
        linear_workspace_bytes(threads, tokens, *p.w, p.epilogue, &bytes, p.types));
    *out = std::max(*out, bytes);
  }
  return Status::Ok();
}

Status run_attention_part(const LayerRun& run, const float* x) {
  const NetworkConfig& c = *run.config;
  const LayerWeights& w = *run.weights;
  const LayerScratch& s = *run.scratch;
  const PackedBatch& batch = *run.batch;
  const int64_t t = batch.tokens, dh = c.head_dim();
  const int64_t hq = c.num_attention_heads, hkv = c.kv_heads();
  const int64_t width = c.qkv_width();
  const std::array<Projection, 4> proj = projections(w, c);
  TESSERA_RETURN_IF_ERROR(project(run, "qkv_gemm", x, proj[0], s.wide));

  const DType a = activation_type(w);
  QkPrepare prep;
  prep.hq = static_cast<int>(hq);
  prep.hkv = static_cast<int>(hkv);
  prep.d = static_cast<int>(dh);
  prep.q_norm = w.q_norm;
  prep.k_norm = w.k_norm;
  prep.eps = c.layer_norm_eps;
  prep.rope = run.rope;
  if (prep.active()) {
    StageSpan span(run.ctx->profiler(), run.stage(prep.q_norm ? "qk_norm_rotary" : "rotary"),
                   "T=" + std::to_string(t));
    prepare_qk(run.ctx->pool(), prep, a, s.wide, t, batch.positions);
  }

  // Attention over views into the QKV rows: Q [1, T, Hq, D], K and V
  // [1, T, Hkv, D], row stride (Hq + 2 Hkv) D elements of the activations' type.
  const size_t esize = dtype_size(a);
  auto view = [&](void* buffer, int64_t element_offset, int64_t heads, int64_t row_stride) {
    TensorView v;
    v.data = static_cast<char*>(buffer) + element_offset * static_cast<int64_t>(esize);
    v.dtype = a;
    v.rank = 4;
    v.shape = {1, t, heads, dh};
    v.strides = {t * row_stride, row_stride, dh, 1};
    return v;
  };
  AttentionArgs args;
  args.q = view(s.wide, 0, hq, width);
  args.k = view(s.wide, hq * dh, hkv, width);
  args.v = view(s.wide, (hq + hkv) * dh, hkv, width);
  args.out = view(s.context, 0, hq, hq * dh);
  args.varlen = Varlen{batch.cu_seqlens, batch.cu_seqlens, batch.count};
  args.bias = batch.attention_bias;
  args.mask = c.attention_of(run.index).mask;
  TESSERA_RETURN_IF_ERROR(run.attention->run(args, *run.ctx));

  // hidden += context Wo^T + bo: the residual add and the bias in the epilogue.
  return project(run, "attn_out_gemm", s.context, proj[1], s.hidden);
}

Status run_ffn_part(const LayerRun& run, const float* x) {
  const NetworkConfig& c = *run.config;
  const LayerWeights& w = *run.weights;
  const LayerScratch& s = *run.scratch;
  const std::array<Projection, 4> proj = projections(w, c);
  TESSERA_RETURN_IF_ERROR(project(run, "ffn_in_gemm", x, proj[2], s.wide));
  const void* inner = s.wide;
  if (c.gated_mlp) {
    StageSpan span(run.ctx->profiler(), run.stage("ffn_gate"),
                   std::string(activation_name(c.activation)));
    gated_activation(run.ctx->pool(), c.activation, activation_type(w), s.wide, run.batch->tokens,
                     c.intermediate_size, s.context);
    inner = s.context;
  }
  return project(run, "ffn_out_gemm", inner, proj[3], s.hidden);
}

void norm_row(const NetworkConfig& c, const float* x, float* y, const float* gamma,
              const float* beta) {
  if (c.norm == NormKind::kRmsNorm) {
    rms_norm_row_to(x, y, gamma, c.layer_norm_eps, c.hidden_size);
  } else {
    layer_norm_row_to(x, y, gamma, beta, c.layer_norm_eps, c.hidden_size);
  }
}

void norm_rows(const LayerRun& run, const StageName& stage, const float* src, float* dst,
               const float* gamma, const float* beta) {
  const NetworkConfig& c = *run.config;
  const int64_t h = c.hidden_size;
  StageSpan span(run.ctx->profiler(), stage);
  for_row_blocks(run.ctx->pool(), run.batch->tokens, 2 * h, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) norm_row(c, src + r * h, dst + r * h, gamma, beta);
  });
}

}  // namespace tessera::model
