// The naive formula: exact semantics, rounding at each stage in low
// precision, and agreement with the reference across the quick grid.
#include "verify/naive.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "dense_problem.h"
#include "tessera/registry.h"
#include "verify/grid.h"
#include "verify/tolerance.h"

namespace tessera::verify {
namespace {

using testing::DenseProblem;

TEST(Naive, MatchesTwoByTwoOnPaperInF32) {
  DenseProblem p(1, 2, 2, 1, 1, 1, 1);  // see reference_test.cc for the arithmetic
  p.q = {1, 2};
  p.k = {0, std::log(3.0f)};
  p.v = {4, 8};
  p.args.scale = 1.0f;
  Context ctx;
  ASSERT_TRUE(naive_attention(p.args, DType::kF32, ctx).ok());
  EXPECT_NEAR(p.out_at(0, 0, 0, 0), 7.0, 1e-5);
  EXPECT_NEAR(p.out_at(0, 1, 0, 0), 7.6, 1e-5);
  EXPECT_NEAR(p.lse_at(0, 0, 1), std::log(10.0), 1e-5);
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

// bf16, worked on paper: k1 = bf16(ln 3) = 1.1015625 (141 ulps of 2^-7).
//   row 1: scores (0, 2.203125); softmax in f32 = (0.099475, 0.900525), rounded
//          to bf16 (0.099609375, 0.90234375); P.V = 7.6171875 -> bf16 7.625
//          (the f32 formula on the same inputs gives 7.6021).
//   row 0: scores (0, 1.1015625); p = (0.249445, 0.750555) -> (0.2490234375,
//          0.75); P.V = 6.99609375 -> bf16 7.0.
TEST(Naive, RoundsEachStageToTheInputPrecision) {
  DenseProblem p(1, 2, 2, 1, 1, 1, 1);
  p.q = {1, 2};
  p.k = {0, round_to_dtype(std::log(3.0f), DType::kBF16)};
  p.v = {4, 8};
  p.args.scale = 1.0f;
  ASSERT_EQ(p.k[1], 1.1015625f);
  Context ctx;
  ASSERT_TRUE(naive_attention(p.args, DType::kBF16, ctx).ok());
  EXPECT_EQ(p.out_at(0, 0, 0, 0), 7.0f);
  EXPECT_EQ(p.out_at(0, 1, 0, 0), 7.625f);
  ASSERT_TRUE(naive_attention(p.args, DType::kF32, ctx).ok());
  EXPECT_NEAR(p.out_at(0, 1, 0, 0), 7.6021, 1e-4);
}

TEST(Naive, NoVisibleKeyGivesZerosAndNanRowGivesNan) {
  DenseProblem p(1, 3, 1, 1, 1, 1, 1);
  p.q = {1, std::numeric_limits<float>::quiet_NaN(), 1};
  p.k = {1};
  p.v = {5};
  p.args.mask = Mask::window(0, 0);  // row i sees key i - 2 only
  Context ctx;
  ASSERT_TRUE(naive_attention(p.args, DType::kF16, ctx).ok());
  EXPECT_EQ(p.out_at(0, 0, 0, 0), 0.0f);
  EXPECT_EQ(p.lse_at(0, 0, 0), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(p.out_at(0, 1, 0, 0), 0.0f);  // masked, even though q is NaN
  EXPECT_EQ(p.out_at(0, 2, 0, 0), 5.0f);
  p.args.mask = Mask::none();
  ASSERT_TRUE(naive_attention(p.args, DType::kF16, ctx).ok());
  EXPECT_TRUE(std::isnan(p.out_at(0, 1, 0, 0)));
  EXPECT_TRUE(std::isnan(p.lse_at(0, 0, 1)));
}

// naive (f32) and the reference are independent implementations of the same
// contract: over the quick grid (varlen, bias, layouts, masks, NaN rows) their
// row kinds agree exactly and their values to f32 accuracy; and the naive
// error in the case's dtype is not zero for low precision (the yardstick is
// not vacuous).
TEST(Naive, AgreesWithTheReferenceOverTheQuickGrid) {
  Registry registry;
  register_builtin_backends(registry);
  Backend* reference = registry.find("reference");
  ASSERT_NE(reference, nullptr);
  for (const AttentionCase& c : quick_grid()) {
    Context ctx;
    {
      MaterializedCase m;
      ASSERT_TRUE(MaterializedCase::create(c, ctx.allocator(), &m).ok());
      Expected e;
      ASSERT_TRUE(Expected::compute(m, *reference, ctx, &e).ok()) << c.name();
      // At least one element each: an empty case's views still need an address.
      std::vector<float> out(std::max<int64_t>(1, m.rows() * c.dv)),
          lse(std::max<int64_t>(1, m.rows()));
      ASSERT_TRUE(naive_attention(m.logical_args(out.data(), lse.data()), DType::kF32, ctx).ok());
      const Judgement f32 = judge({"out", out.data(), e.out_ref(), out.data(), e.lse_ref(),
                                   m.rows(), c.dv, output_floor(DType::kF32), 0.0f});
      EXPECT_EQ(f32.exact_failures, 0)
          << c.name() << ": " << f32.describe([&](int64_t r) { return m.row_name(r); });
      EXPECT_LT(f32.max_error, 5e-5) << c.name();
      const Judgement lowp = judge({"out", e.out_naive(), e.out_ref(), e.out_naive(), e.lse_ref(),
                                    m.rows(), c.dv, output_floor(c.dtype), 0.0f});
      EXPECT_EQ(lowp.exact_failures, 0) << c.name();
      if (c.dtype != DType::kF32) {
        EXPECT_GT(lowp.naive_error, 0.0) << c.name();
      }
    }
    EXPECT_TRUE(ctx.allocator().leaks().empty()) << c.name();
  }
}

}  // namespace
}  // namespace tessera::verify
