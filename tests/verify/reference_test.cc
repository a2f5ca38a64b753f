// The reference backend defines the semantics, so it is checked on its own:
// against values computed on paper, and against a tiny float64 formula
// written here, independent of the reference and of verify's naive formula.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "dense_problem.h"
#include "tessera/context.h"
#include "tessera/registry.h"

namespace tessera::verify {
namespace {

using testing::DenseProblem;

constexpr float kInf = std::numeric_limits<float>::infinity();

Status run_reference(const AttentionArgs& args) {
  Registry registry;
  register_builtin_backends(registry);
  Backend* reference = registry.find("reference");
  if (reference == nullptr) return not_found("no reference backend");
  Context ctx;
  Status s = run_args(*reference, args, ctx);
  EXPECT_TRUE(ctx.allocator().leaks().empty());
  return s;
}

// Sq = Sk = 2, D = 1, scale 1: q = (1, 2), k = (0, ln 3), v = (4, 8).
//   row 0: scores (0, ln 3)  -> p = (1/4, 3/4)  -> out = 1 + 6 = 7,     lse = ln 4
//   row 1: scores (0, 2 ln 3) -> p = (1/10, 9/10) -> out = 0.4 + 7.2 = 7.6, lse = ln 10
TEST(Reference, MatchesTwoByTwoOnPaper) {
  DenseProblem p(1, 2, 2, 1, 1, 1, 1);
  p.q = {1, 2};
  p.k = {0, std::log(3.0f)};
  p.v = {4, 8};
  p.args.scale = 1.0f;
  ASSERT_TRUE(run_reference(p.args).ok());
  EXPECT_NEAR(p.out_at(0, 0, 0, 0), 7.0, 1e-6);
  EXPECT_NEAR(p.out_at(0, 1, 0, 0), 7.6, 1e-6);
  EXPECT_NEAR(p.lse_at(0, 0, 0), std::log(4.0), 1e-6);
  EXPECT_NEAR(p.lse_at(0, 0, 1), std::log(10.0), 1e-6);
  // Causal: row 0 sees key 0 only -> out = v0 = 4, lse = 0.
  p.args.mask = Mask::causal();
  ASSERT_TRUE(run_reference(p.args).ok());
  EXPECT_EQ(p.out_at(0, 0, 0, 0), 4.0f);
  EXPECT_EQ(p.lse_at(0, 0, 0), 0.0f);
  EXPECT_NEAR(p.out_at(0, 1, 0, 0), 7.6, 1e-6);
}

// Sq = 3 > Sk = 1, causal bottom-right: query i sees key j <= i - 2, so rows
// 0 and 1 see nothing (zeros, lse -inf) and row 2 sees key 0.
TEST(Reference, RowsWithNoVisibleKeyAreZerosWithMinusInfLse) {
  DenseProblem p(1, 3, 1, 1, 1, 2, 2);
  p.q = {1, 1, 1, 1, 1, 1};
  p.k = {0.5f, 0.5f};
  p.v = {3, -2};
  p.args.scale = 1.0f;
  p.args.mask = Mask::causal();
  ASSERT_TRUE(run_reference(p.args).ok());
  for (int i : {0, 1}) {
    EXPECT_EQ(p.out_at(0, i, 0, 0), 0.0f);
    EXPECT_EQ(p.out_at(0, i, 0, 1), 0.0f);
    EXPECT_EQ(p.lse_at(0, 0, i), -kInf);
  }
  EXPECT_EQ(p.out_at(0, 2, 0, 0), 3.0f);
  EXPECT_EQ(p.out_at(0, 2, 0, 1), -2.0f);
  EXPECT_EQ(p.lse_at(0, 0, 2), 1.0f);  // the one score, 1*0.5 + 1*0.5
}

// softcap c = 2: score 3 becomes 2 tanh(1.5); with scores (2 tanh 1.5, 0) and
// v = (1, 0) the output is the logistic function of the first score.
TEST(Reference, SoftcapsScoresWithTanh) {
  DenseProblem p(1, 1, 2, 1, 1, 1, 1);
  p.q = {3};
  p.k = {1, 0};
  p.v = {1, 0};
  p.args.scale = 1.0f;
  p.args.softcap = 2.0f;
  ASSERT_TRUE(run_reference(p.args).ok());
  const double capped = 2.0 * std::tanh(1.5);  // 1.8103...
  EXPECT_NEAR(p.out_at(0, 0, 0, 0), 1.0 / (1.0 + std::exp(-capped)), 1e-6);
  EXPECT_NEAR(p.lse_at(0, 0, 0), std::log(std::exp(capped) + 1.0), 1e-6);
}

// q = 0: every score is 0, so a row averages the values it sees. window(1, 0)
// over v = (1, 2, 4): rows see {0}, {0, 1}, {1, 2} -> out (1, 1.5, 3).
TEST(Reference, WindowAveragesVisibleValues) {
  DenseProblem p(1, 3, 3, 1, 1, 1, 1);
  p.v = {1, 2, 4};
  p.args.mask = Mask::window(1, 0);
  ASSERT_TRUE(run_reference(p.args).ok());
  EXPECT_EQ(p.out_at(0, 0, 0, 0), 1.0f);
  EXPECT_EQ(p.out_at(0, 1, 0, 0), 1.5f);
  EXPECT_EQ(p.out_at(0, 2, 0, 0), 3.0f);
  EXPECT_NEAR(p.lse_at(0, 0, 2), std::log(2.0), 1e-7);
}

// GQA: Hq = 4 over Hkv = 2; query head h reads kv head h / 2. One key: out = v.
TEST(Reference, GroupsQueryHeadsOverKvHeads) {
  DenseProblem p(1, 1, 1, 4, 2, 1, 1);
  p.v = {10, 20};
  ASSERT_TRUE(run_reference(p.args).ok());
  EXPECT_EQ(p.out_at(0, 0, 0, 0), 10.0f);
  EXPECT_EQ(p.out_at(0, 0, 1, 0), 10.0f);
  EXPECT_EQ(p.out_at(0, 0, 2, 0), 20.0f);
  EXPECT_EQ(p.out_at(0, 0, 3, 0), 20.0f);
}

TEST(Reference, NanInAQueryRowGivesANanRowOnly) {
  DenseProblem p(1, 2, 2, 1, 1, 1, 1);
  p.q = {std::numeric_limits<float>::quiet_NaN(), 0};
  p.v = {1, 3};
  ASSERT_TRUE(run_reference(p.args).ok());
  EXPECT_TRUE(std::isnan(p.out_at(0, 0, 0, 0)));
  EXPECT_TRUE(std::isnan(p.lse_at(0, 0, 0)));
  EXPECT_EQ(p.out_at(0, 1, 0, 0), 2.0f);
}

// Packed varlen: sequences (1 query, 2 keys) and (2 queries, 1 key), q = 0.
TEST(Reference, VarlenKeepsSequencesApart) {
  DenseProblem p(1, 3, 3, 1, 1, 1, 1);
  p.v = {2, 4, 9};
  const int32_t cu_q[] = {0, 1, 3}, cu_k[] = {0, 2, 3};
  p.args.varlen = Varlen{cu_q, cu_k, 2};
  ASSERT_TRUE(run_reference(p.args).ok());
  EXPECT_EQ(p.out_at(0, 0, 0, 0), 3.0f);  // mean of 2 and 4
  EXPECT_EQ(p.out_at(0, 1, 0, 0), 9.0f);
  EXPECT_EQ(p.out_at(0, 2, 0, 0), 9.0f);
}

// The textbook formula in float64, dense BSHD inputs, written for this test.
void attention64(DenseProblem& p, std::vector<double>& out, std::vector<double>& lse,
                 const std::vector<float>& bias) {
  const AttentionArgs& a = p.args;
  const double scale = a.scale ? *a.scale : 1.0 / std::sqrt(static_cast<double>(p.d));
  for (int64_t b = 0; b < p.b; ++b) {
    for (int64_t h = 0; h < p.hq; ++h) {
      const int64_t kh = h / (p.hq / p.hkv);
      for (int64_t i = 0; i < p.sq; ++i) {
        std::vector<double> w(p.sk, 0.0);
        double max_s = -INFINITY;
        for (int64_t j = 0; j < p.sk; ++j) {
          if (!a.mask.visible(i, j, p.sq, p.sk)) continue;
          double s = 0;
          for (int64_t e = 0; e < p.d; ++e) s += double(p.q_at(b, i, h, e)) * p.k_at(b, j, kh, e);
          s *= scale;
          if (a.softcap > 0) s = a.softcap * std::tanh(s / a.softcap);
          s += bias[((b * p.hq + h) * p.sq + i) * p.sk + j];
          w[j] = s;
          max_s = std::max(max_s, s);
        }
        double sum = 0;
        for (int64_t j = 0; j < p.sk; ++j) {
          w[j] = a.mask.visible(i, j, p.sq, p.sk) ? std::exp(w[j] - max_s) : 0.0;
          sum += w[j];
        }
        lse[(b * p.hq + h) * p.sq + i] = max_s + std::log(sum);
        for (int64_t e = 0; e < p.dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < p.sk; ++j) acc += w[j] * p.v_at(b, j, kh, e);
          out[((b * p.sq + i) * p.hq + h) * p.dv + e] = acc / sum;
        }
      }
    }
  }
}

TEST(Reference, MatchesAnIndependentFloat64Formula) {
  const Mask masks[] = {Mask::none(), Mask::causal(), Mask::window(3, 1)};
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  for (const Mask& mask : masks) {
    for (float softcap : {0.0f, 1.5f}) {
      DenseProblem p(2, 9, 13, 4, 2, 8, 5);
      for (auto* t : {&p.q, &p.k, &p.v}) {
        for (float& x : *t) x = normal(rng);
      }
      std::vector<float> bias(p.b * p.hq * p.sq * p.sk);
      for (float& x : bias) x = normal(rng);
      p.args.bias = TensorView::contiguous(bias.data(), DType::kF32, {p.b, p.hq, p.sq, p.sk});
      p.args.mask = mask;
      p.args.softcap = softcap;
      ASSERT_TRUE(run_reference(p.args).ok());
      std::vector<double> out(p.out.size()), lse(p.lse.size());
      attention64(p, out, lse, bias);
      for (size_t i = 0; i < out.size(); ++i) {
        ASSERT_NEAR(p.out[i], out[i], 1e-6 * (1 + std::fabs(out[i])))
            << "out element " << i << " mask " << mask.describe() << " softcap " << softcap;
      }
      for (size_t i = 0; i < lse.size(); ++i) {
        ASSERT_NEAR(p.lse[i], lse[i], 1e-6 * (1 + std::fabs(lse[i]))) << "lse " << i;
      }
    }
  }
}

}  // namespace
}  // namespace tessera::verify
