// The tolerance rule: max|got - ref| <= 2 * max|naive - ref| + floor, exact
// rows for no-key and NaN rows, worst element reported.
#include "verify/tolerance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace tessera::verify {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// Two rows of width 2; ref_lse decides the row kinds.
struct Fixture {
  std::vector<float> got, ref, naive, ref_lse;
  FloorSpec floor = output_floor(DType::kF32);
  Judgement run(float no_key_value = 0.0f) const {
    return judge({"out", got.data(), ref.data(), naive.data(), ref_lse.data(),
                  static_cast<int64_t>(ref_lse.size()), 2, floor, no_key_value});
  }
};

std::string row_name(int64_t row) { return "[row " + std::to_string(row) + "]"; }

TEST(Tolerance, BoundIsTwiceNaivePlusFloor) {
  Fixture f{
      {1.0f, 2.0f, 3.0f, 4.0f}, {1.0f, 2.0f, 3.0f, 4.0f}, {1.0f, 2.01f, 3.0f, 4.0f}, {0.5f, 0.5f}};
  const double naive_error = std::fabs(2.01f - 2.0f);
  const double floor = kFloorUlps * 0x1p-24 * 4.0;  // f32 u times max|ref|
  f.got[3] = 4.0f + static_cast<float>(1.9 * naive_error);
  Judgement pass = f.run();
  EXPECT_TRUE(pass.ok()) << pass.describe(row_name);
  EXPECT_DOUBLE_EQ(pass.naive_error, naive_error);
  EXPECT_DOUBLE_EQ(pass.floor, floor);
  EXPECT_DOUBLE_EQ(pass.bound, 2 * naive_error + floor);

  f.got[3] = 4.0f + static_cast<float>(2.1 * naive_error);
  Judgement fail = f.run();
  EXPECT_FALSE(fail.ok());
  EXPECT_EQ(fail.worst.row, 1);
  EXPECT_EQ(fail.worst.col, 1);
  EXPECT_EQ(fail.worst.got, f.got[3]);
  EXPECT_EQ(fail.worst.want, 4.0f);
  const std::string text = fail.describe(row_name);
  EXPECT_NE(text.find("at [row 1] d=1"), std::string::npos) << text;
  EXPECT_NE(text.find("> bound"), std::string::npos) << text;
  EXPECT_NE(text.find("naive"), std::string::npos) << text;
}

TEST(Tolerance, FloorAdmitsRoundingWhenNaiveIsExact) {
  // bf16: u = 2^-8; the floor is 2 u max|ref| = 2^-6 for max|ref| = 2.
  Fixture f{{1.0f, 2.0f, 0.5f, 0.25f},
            {1.0f, 2.0f, 0.5f, 0.25f},
            {1.0f, 2.0f, 0.5f, 0.25f},
            {0.0f, 0.0f}};
  f.floor = output_floor(DType::kBF16);
  f.got[0] = 1.0f + 0x1p-7f;  // one bf16 ulp at 1
  EXPECT_TRUE(f.run().ok());
  f.got[0] = 1.0f + 0x1p-5f;  // four ulps
  EXPECT_FALSE(f.run().ok());
}

TEST(Tolerance, NonFiniteWhereReferenceIsFiniteIsAnInfiniteError) {
  Fixture f{
      {1.0f, kNan, 3.0f, 4.0f}, {1.0f, 2.0f, 3.0f, 4.0f}, {1.0f, 2.5f, 3.0f, 4.0f}, {0.0f, 0.0f}};
  Judgement j = f.run();
  EXPECT_FALSE(j.ok());
  EXPECT_TRUE(std::isinf(j.max_error));
  EXPECT_EQ(j.worst.row, 0);
  EXPECT_EQ(j.worst.col, 1);
  f.got[1] = kInf;
  EXPECT_FALSE(f.run().ok());
}

TEST(Tolerance, RowWithNoVisibleKeyMustBeExactZeros) {
  Fixture f{
      {0.0f, -0.0f, 3.0f, 4.0f}, {0.0f, 0.0f, 3.0f, 4.0f}, {0.0f, 0.0f, 3.0f, 4.0f}, {-kInf, 0.0f}};
  EXPECT_TRUE(f.run().ok());
  f.got[1] = 1e-30f;  // within any tolerance, but not zero
  Judgement j = f.run();
  EXPECT_FALSE(j.ok());
  EXPECT_EQ(j.exact_failures, 1);
  const std::string text = j.describe(row_name);
  EXPECT_NE(text.find("[row 0] d=1 sees no key"), std::string::npos) << text;
  f.got[1] = kNan;  // poison-like garbage
  EXPECT_FALSE(f.run().ok());
}

TEST(Tolerance, NanRowMustBeAllNanWhileOtherRowsStayJudged) {
  Fixture f{
      {kNan, kNan, 3.0f, 4.0f}, {kNan, kNan, 3.0f, 4.0f}, {kNan, kNan, 3.0f, 4.0f}, {kNan, 0.0f}};
  EXPECT_TRUE(f.run().ok());
  f.got[1] = 0.0f;
  Judgement j = f.run();
  EXPECT_FALSE(j.ok());
  EXPECT_EQ(j.first_exact_kind, RowKind::kNan);
  f.got[1] = kNan;
  f.got[2] = 3.5f;  // the healthy row is still held to the rule
  EXPECT_FALSE(f.run().ok());
}

TEST(Tolerance, LseRowsWithNoKeyMustBeMinusInfinity) {
  std::vector<float> ref = {-kInf, 1.5f}, naive = {-kInf, 1.5f}, got = {-kInf, 1.5f};
  const auto run = [&] {
    return judge(
        {"lse", got.data(), ref.data(), naive.data(), ref.data(), 2, 1, lse_floor(), -kInf});
  };
  EXPECT_TRUE(run().ok());
  got[0] = -1e30f;
  EXPECT_FALSE(run().ok());
  got[0] = -kInf;
  // lse floor: 2 * 2^-24 * max(|1.5|, 1).
  got[1] = std::nextafter(1.5f, 2.0f);  // one f32 ulp: 1.2e-7 < 1.8e-7
  EXPECT_TRUE(run().ok());
  got[1] = 1.5f + 1e-6f;
  EXPECT_FALSE(run().ok());
}

TEST(Tolerance, RowKindComesFromReferenceLse) {
  EXPECT_EQ(row_kind(0.3f), RowKind::kNormal);
  EXPECT_EQ(row_kind(-kInf), RowKind::kNoVisibleKey);
  EXPECT_EQ(row_kind(kNan), RowKind::kNan);
}

}  // namespace
}  // namespace tessera::verify
