// Guard bands and stride gaps catch writes outside a view.
#include "verify/guarded_tensor.h"

#include <gtest/gtest.h>

#include <set>

namespace tessera::verify {
namespace {

using Shape = std::array<int64_t, kMaxRank>;

TEST(PaddedStrides, RowMajorAndPaddedAndTransposed) {
  const Shape shape{2, 3, 4, 5};
  EXPECT_EQ(padded_strides(4, shape, {0, 1, 2, 3}, 0), (Shape{60, 20, 5, 1}));
  // pad 3 after every row: D row 5+3, H block 4*8+3, S block 3*35+3.
  EXPECT_EQ(padded_strides(4, shape, {0, 1, 2, 3}, 3), (Shape{108, 35, 8, 1}));
  // BHSD memory order viewed as [B, S, H, D].
  EXPECT_EQ(padded_strides(4, shape, {0, 2, 1, 3}, 0), (Shape{60, 5, 15, 1}));
}

struct Guarded : ::testing::Test {
  TrackingAllocator alloc;
  GuardedTensor t;
  void SetUp() override {
    const Shape shape{2, 3, 2, 5};
    ASSERT_TRUE(GuardedTensor::create(alloc, "test", DType::kBF16, 4, shape,
                                      padded_strides(4, shape, {0, 2, 1, 3}, 3), kGuardByte, &t)
                    .ok());
    t.fill_view(kPoisonByte);
  }
  void TearDown() override {
    t = GuardedTensor();
    EXPECT_TRUE(alloc.leaks().empty());
  }
  uint16_t* data() { return static_cast<uint16_t*>(t.view().data); }
};

TEST_F(Guarded, VisitsEveryElementOnceInRowMajorOrder) {
  std::set<int64_t> offsets;
  int64_t expected_logical = 0;
  t.for_each_element([&](int64_t logical, int64_t offset) {
    EXPECT_EQ(logical, expected_logical++);
    const int64_t b = logical / 30, s = logical / 10 % 3, h = logical / 5 % 2, d = logical % 5;
    EXPECT_EQ(offset, t.view().offset({b, s, h, d}));
    offsets.insert(offset);
  });
  EXPECT_EQ(expected_logical, 60);
  EXPECT_EQ(offsets.size(), 60u);
}

TEST_F(Guarded, WritesInsideTheViewAreFine) {
  t.for_each_element([&](int64_t, int64_t offset) { data()[offset] = 0; });
  EXPECT_TRUE(t.check_fill("out").ok());
  EXPECT_FALSE(t.check_view_holds("out", kPoisonByte).ok());
}

TEST_F(Guarded, CatchesAWriteJustPastTheEnd) {
  int64_t last = 0;
  t.for_each_element([&](int64_t, int64_t offset) { last = std::max(last, offset); });
  data()[last + 1] = 0;
  const Status s = t.check_fill("out");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("out: guard band after the view"), std::string::npos) << s.message();
}

TEST_F(Guarded, CatchesAWriteJustBeforeTheStart) {
  data()[-1] = 0;
  const Status s = t.check_fill("out");
  EXPECT_NE(s.message().find("guard band before the view"), std::string::npos) << s.message();
}

TEST_F(Guarded, CatchesAWriteIntoAStrideGap) {
  data()[5] = 0;  // the padding after row (b=0, s=0, h=0)
  const Status s = t.check_fill("out");
  EXPECT_NE(s.message().find("stride gap at element offset 5"), std::string::npos) << s.message();
}

TEST_F(Guarded, CatchesOneChangedByteInTheView) {
  EXPECT_TRUE(t.check_view_holds("out", kPoisonByte).ok());
  reinterpret_cast<uint8_t*>(data() + t.view().offset({1, 2, 1, 4}))[1] = 0;
  const Status s = t.check_view_holds("out", kPoisonByte);
  EXPECT_NE(s.message().find("out was written: element 59"), std::string::npos) << s.message();
}

TEST(GuardedTensor, RejectsOverlappingStrides) {
  TrackingAllocator alloc;
  GuardedTensor t;
  const Status s = GuardedTensor::create(alloc, "test", DType::kF32, 2, {4, 4, 0, 0}, {2, 1, 0, 0},
                                         kGuardByte, &t);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::verify
