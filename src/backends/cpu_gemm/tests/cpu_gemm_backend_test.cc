// cpu.gemm against the reference on odd shapes crossed with every feature it
// claims (verify's cases and tolerance rule), plus its budget check. (The
// conformance suite covers the full grid for every backend; these are the
// cases that exercise cpu.gemm's own paths: head grouping, masked row blocks,
// converted K/V tiles, direct f32 views.)
#include "cpu_gemm/cpu_gemm_backend.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference/reference_backend.h"
#include "tessera/context.h"
#include "verify/materialize.h"
#include "verify/runner.h"

namespace tessera {
namespace {

using verify::AttentionCase;
using verify::BiasKind;

// GQA with odd sizes and Dv != D; each test changes what it exercises.
AttentionCase base_case() {
  AttentionCase c;
  c.batch = 2, c.sq = 37, c.sk = 53, c.hq = 6, c.hkv = 2, c.d = 59, c.dv = 45;
  c.lse = true;
  return c;
}

// Runs cpu.gemm on the case and judges it as the conformance suite does
// (verify::run_case: the tolerance rule against the float64 reference and
// the naive formula, guard bands, untouched inputs, leaks); cpu.gemm must
// accept the case and allocate its workspace from the context.
void expect_matches_reference(AttentionCase c, const std::string& label) {
  c.seed = verify::stable_hash(c.name());
  Context ctx(ContextOptions{.num_threads = 2});
  auto gemm = make_cpu_gemm_backend();
  auto ref = make_reference_backend();
  const verify::CaseOutcome outcome = verify::run_case(*gemm, *ref, c, ctx);
  EXPECT_EQ(outcome.verdict, verify::Verdict::kPass)
      << label << " " << c.name() << ": " << outcome.summary();
  EXPECT_TRUE(ctx.allocator().leaks().empty()) << label;
  EXPECT_GT(ctx.allocator().by_owner()["cpu.gemm"].peak_bytes, 0u) << label;
}

TEST(CpuGemm, MatchesReferenceOverFeaturesAndDtypes) {
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (int feature = 0; feature < 7; ++feature) {
      AttentionCase p = base_case();
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
          p.mask = Mask::window(9, 4), p.layout = verify::Layout::kBHSD;
          break;
        case 4:
          p.bias = BiasKind::kFull, p.softcap = 2.5f;
          break;
        case 5:
          p.bias = BiasKind::kKeyStride0, p.hkv = 1, p.mask = Mask::window(-1, 0);
          break;  // MQA, a [B, 1, 1, Sk] bias with a masked key
        case 6:
          p.nan_rows = 1, p.hkv = 6;
          break;  // MHA, a NaN query row
      }
      expect_matches_reference(p, label);
    }
  }
}

TEST(CpuGemm, MatchesReferenceOnVarlenWithAnEmptySequence) {
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    AttentionCase p = base_case();
    p.dtype = dtype;
    p.set_varlen({17, 0, 133}, {40, 1, 159});
    p.mask = Mask::causal();
    p.bias = BiasKind::kFull;
    expect_matches_reference(p, "varlen " + std::string(dtype_name(dtype)));
  }
}

TEST(CpuGemm, DecodeShapeOneQueryManyKeys) {
  AttentionCase p = base_case();
  p.batch = 1, p.sq = 1, p.sk = 1031, p.hq = 8, p.hkv = 2, p.d = 64, p.dv = 64;
  p.mask = Mask::causal();
  expect_matches_reference(p, "decode");
}

TEST(CpuGemm, CheckRejectsWorkspaceOverBudgetWithTheNumbers) {
  AttentionCase p = base_case();
  p.sq = 1024, p.sk = 2048;
  const verify::OwnedCase t(p);
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
  verify::OwnedCase t(base_case());  // out poisoned
  Context ctx(ContextOptions{.num_threads = 2, .memory_budget_bytes = 1024});
  auto gemm = make_cpu_gemm_backend();
  // Straight to run(), past check(): the allocator's refusal is what is tested.
  std::optional<AttentionProblem> valid;
  ASSERT_TRUE(AttentionProblem::make(t.args, &valid).ok());
  const Status st = gemm->run(*valid, ctx);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.to_string();
  const Status untouched = t.materialized().check_outputs_poisoned();
  EXPECT_TRUE(untouched.ok()) << untouched.message();
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

}  // namespace
}  // namespace tessera
