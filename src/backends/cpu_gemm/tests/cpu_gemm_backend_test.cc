// cpu.gemm against the reference on odd shapes crossed with every feature it
// claims, plus its budget check. (The conformance suite covers the full grid
// for every backend; these are the cases that exercise cpu.gemm's own paths:
// head grouping, masked row blocks, converted K/V tiles, direct f32 views.)
#include "cpu_gemm/cpu_gemm_backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "reference/reference_backend.h"
#include "tessera/context.h"

namespace tessera {
namespace {

struct Problem {
  int64_t b = 2, sq = 37, sk = 53, hq = 6, hkv = 2, d = 59, dv = 45;
  DType dtype = DType::kF32;
  Mask mask;
  bool bhsd = false;  // memory order [B, H, S, D], viewed through strides
  int bias_kind = 0;  // 0 none, 1 full [B, Hq, Sq, Sk], 2 broadcast [B, 1, 1, Sk]
  float softcap = 0.0f;
  std::vector<int32_t> cu_q, cu_k;  // varlen when set
  int nan_q_row = -1;               // q row (in the packed row order) to poison
};

// Owns the tensors of one problem and the args over them.
struct Tensors {
  std::vector<uint8_t> q, k, v, out, out_ref;
  std::vector<float> lse, lse_ref, bias;
  AttentionArgs args, ref_args;
};

TensorView view(void* data, DType dtype, int64_t b, int64_t s, int64_t h, int64_t d, bool bhsd) {
  TensorView t = TensorView::contiguous(data, dtype, {b, s, h, d});
  if (bhsd) {
    t.strides = {h * s * d, d, s * d, 1};
  }
  return t;
}

void fill(std::vector<uint8_t>& raw, DType dtype, int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.5f, 1.5f);
  raw.assign(static_cast<size_t>(n) * dtype_size(dtype), 0);
  for (int64_t i = 0; i < n; ++i) {
    store_from_f32(raw.data(), i, dtype, dist(rng));
  }
}

Tensors make(const Problem& p) {
  Tensors t;
  std::mt19937 rng(42);
  const bool varlen = !p.cu_q.empty();
  const int64_t rb = varlen ? 1 : p.b;
  const int64_t tq = varlen ? p.cu_q.back() : p.sq, tk = varlen ? p.cu_k.back() : p.sk;
  fill(t.q, p.dtype, rb * tq * p.hq * p.d, rng);
  fill(t.k, p.dtype, rb * tk * p.hkv * p.d, rng);
  fill(t.v, p.dtype, rb * tk * p.hkv * p.dv, rng);
  if (p.nan_q_row >= 0) {
    for (int64_t c = 0; c < p.d; ++c) {
      store_from_f32(t.q.data(), p.nan_q_row * p.d + c, p.dtype,
                     std::numeric_limits<float>::quiet_NaN());
    }
  }
  t.out.assign(static_cast<size_t>(rb * tq * p.hq * p.dv) * dtype_size(p.dtype), 0xAB);
  t.out_ref = t.out;
  t.lse.assign(static_cast<size_t>(rb * p.hq * tq), 7.0f);
  t.lse_ref = t.lse;
  AttentionArgs& a = t.args;
  a.q = view(t.q.data(), p.dtype, rb, tq, p.hq, p.d, p.bhsd);
  a.k = view(t.k.data(), p.dtype, rb, tk, p.hkv, p.d, p.bhsd);
  a.v = view(t.v.data(), p.dtype, rb, tk, p.hkv, p.dv, p.bhsd);
  a.out = view(t.out.data(), p.dtype, rb, tq, p.hq, p.dv, p.bhsd);
  a.lse = TensorView::contiguous(t.lse.data(), DType::kF32, {rb, p.hq, tq});
  a.mask = p.mask;
  a.softcap = p.softcap;
  if (varlen) {
    a.varlen = Varlen{p.cu_q.data(), p.cu_k.data(), static_cast<int64_t>(p.cu_q.size()) - 1};
  }
  const int64_t sq = varlen ? dims_of(a).sq : p.sq, sk = varlen ? dims_of(a).sk : p.sk;
  const int64_t bb = varlen ? static_cast<int64_t>(p.cu_q.size()) - 1 : p.b;
  if (p.bias_kind == 1) {
    t.bias.resize(static_cast<size_t>(bb * p.hq * sq * sk));
    for (size_t i = 0; i < t.bias.size(); ++i) {
      t.bias[i] = static_cast<float>(i % 7) * 0.3f - 1.0f;
    }
    a.bias = TensorView::contiguous(t.bias.data(), DType::kF32, {bb, p.hq, sq, sk});
  } else if (p.bias_kind == 2) {
    t.bias.resize(static_cast<size_t>(bb * sk));
    for (size_t i = 0; i < t.bias.size(); ++i) {
      t.bias[i] = i % 5 == 0 ? -std::numeric_limits<float>::infinity() : 0.1f * (i % 3);
    }
    a.bias = TensorView::contiguous(t.bias.data(), DType::kF32, {bb, 1, 1, sk});
  }
  t.ref_args = a;
  t.ref_args.out.data = t.out_ref.data();
  t.ref_args.lse.data = t.lse_ref.data();
  return t;
}

// Runs both backends and compares every element: the tolerance is a few
// units of the storage type's rounding (f32 accumulation vs double).
void expect_matches_reference(const Problem& p, const std::string& label) {
  Tensors t = make(p);
  Context ctx(ContextOptions{.num_threads = 2});
  auto gemm = make_cpu_gemm_backend();
  auto ref = make_reference_backend();
  ASSERT_TRUE(validate(t.args).ok()) << validate(t.args).message();
  ASSERT_TRUE(check_args(*gemm, t.args, ctx).empty()) << label;
  ASSERT_TRUE(run_args(*gemm, t.args, ctx).ok()) << label;
  ASSERT_TRUE(run_args(*ref, t.ref_args, ctx).ok()) << label;
  const double tol = p.dtype == DType::kF32 ? 2e-5 : 4 * dtype_unit_roundoff(p.dtype);
  const int64_t n = static_cast<int64_t>(t.out.size() / dtype_size(p.dtype));
  double worst = 0;
  int64_t worst_at = -1;
  for (int64_t i = 0; i < n; ++i) {
    const float got = load_as_f32(t.out.data(), i, p.dtype);
    const float want = load_as_f32(t.out_ref.data(), i, p.dtype);
    if (std::isnan(want) || std::isnan(got)) {
      ASSERT_EQ(std::isnan(want), std::isnan(got)) << label << " element " << i;
      continue;
    }
    const double err = std::abs(got - want) / (1.0 + std::abs(want));
    if (err > worst) {
      worst = err, worst_at = i;
    }
  }
  EXPECT_LE(worst, tol) << label << ": worst element " << worst_at;
  for (size_t i = 0; i < t.lse.size(); ++i) {
    const float got = t.lse[i], want = t.lse_ref[i];
    if (std::isnan(want) || std::isinf(want)) {
      EXPECT_TRUE(std::isnan(got) ? std::isnan(want) : got == want) << label << " lse " << i;
    } else {
      EXPECT_NEAR(got, want, 1e-4 * (1 + std::abs(want))) << label << " lse " << i;
    }
  }
  EXPECT_TRUE(ctx.allocator().leaks().empty()) << label;
  EXPECT_GT(ctx.allocator().peak_bytes(), 0u);
}

TEST(CpuGemm, MatchesReferenceOverFeaturesAndDtypes) {
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (int feature = 0; feature < 7; ++feature) {
      Problem p;
      p.dtype = dtype;
      std::string label = std::string(dtype_name(dtype)) + " feature " + std::to_string(feature);
      switch (feature) {
        case 0:
          break;  // plain GQA, Dv != D
        case 1:
          p.mask = Mask::causal();
          break;  // Sq < Sk
        case 2:
          p.mask = Mask::causal(), p.sq = 300, p.sk = 170;
          break;  // rows with no key
        case 3:
          p.mask = Mask::window(9, 4), p.bhsd = true;
          break;
        case 4:
          p.bias_kind = 1, p.softcap = 2.5f;
          break;
        case 5:
          p.bias_kind = 2, p.hkv = 1, p.mask = Mask::window(-1, 0);
          break;  // MQA
        case 6:
          p.nan_q_row = 5, p.hkv = 6;
          break;  // MHA, NaN query row
      }
      expect_matches_reference(p, label);
    }
  }
}

TEST(CpuGemm, MatchesReferenceOnVarlenWithAnEmptySequence) {
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    Problem p;
    p.dtype = dtype;
    p.cu_q = {0, 17, 17, 150};
    p.cu_k = {0, 40, 41, 200};
    p.mask = Mask::causal();
    p.bias_kind = 1;
    expect_matches_reference(p, "varlen " + std::string(dtype_name(dtype)));
  }
}

TEST(CpuGemm, DecodeShapeOneQueryManyKeys) {
  Problem p;
  p.b = 1, p.sq = 1, p.sk = 1031, p.hq = 8, p.hkv = 2, p.d = 64, p.dv = 64;
  p.mask = Mask::causal();
  expect_matches_reference(p, "decode");
}

TEST(CpuGemm, CheckRejectsWorkspaceOverBudgetWithTheNumbers) {
  Problem p;
  p.sq = 1024, p.sk = 2048;
  Tensors t = make(p);
  auto gemm = make_cpu_gemm_backend();
  std::optional<AttentionProblem> valid;
  ASSERT_TRUE(AttentionProblem::make(t.args, &valid).ok());
  const size_t need = gemm->workspace_bytes(*valid, Context(ContextOptions{.num_threads = 2}));
  // At least the f32 scores of one head group: g*Sq x Sk.
  EXPECT_GE(need, size_t{3} * 1024 * 2048 * sizeof(float));
  Context roomy(ContextOptions{.num_threads = 2, .memory_budget_bytes = need});
  EXPECT_TRUE(gemm->reasons(*valid, roomy).empty());
  Context tight(ContextOptions{.num_threads = 2, .memory_budget_bytes = need - 1});
  const std::vector<std::string> reasons = gemm->reasons(*valid, tight);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons[0].find(std::to_string(need)), std::string::npos) << reasons[0];
  EXPECT_NE(reasons[0].find(std::to_string(need - 1)), std::string::npos) << reasons[0];
  EXPECT_NE(reasons[0].find("3072 x 2048"), std::string::npos) << reasons[0];
}

TEST(CpuGemm, RefusedWorkspaceLeavesOutUntouched) {
  Problem p;
  Tensors t = make(p);
  const std::vector<uint8_t> before = t.out;
  Context ctx(ContextOptions{.num_threads = 2, .memory_budget_bytes = 1024});
  auto gemm = make_cpu_gemm_backend();
  // Straight to run(), past check(): the allocator's refusal is what is tested.
  std::optional<AttentionProblem> valid;
  ASSERT_TRUE(AttentionProblem::make(t.args, &valid).ok());
  const Status st = gemm->run(*valid, ctx);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.to_string();
  EXPECT_EQ(t.out, before);
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

}  // namespace
}  // namespace tessera
