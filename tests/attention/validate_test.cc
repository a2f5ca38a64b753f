#include <gtest/gtest.h>

#include <vector>

#include "tessera/attention.h"

namespace tessera {
namespace {

struct Tensors {
  std::vector<float> q, k, v, out;
  AttentionArgs args;
  Tensors(int64_t b, int64_t sq, int64_t sk, int64_t hq, int64_t hkv, int64_t d)
      : q(b * sq * hq * d), k(b * sk * hkv * d), v(b * sk * hkv * d), out(b * sq * hq * d) {
    args.q = TensorView::contiguous(q.data(), DType::kF32, {b, sq, hq, d});
    args.k = TensorView::contiguous(k.data(), DType::kF32, {b, sk, hkv, d});
    args.v = TensorView::contiguous(v.data(), DType::kF32, {b, sk, hkv, d});
    args.out = TensorView::contiguous(out.data(), DType::kF32, {b, sq, hq, d});
  }
};

void expect_error_mentions(const AttentionArgs& a, const std::string& needle) {
  Status s = validate(a);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
}

TEST(Validate, AcceptsMhaGqaMqa) {
  for (int64_t hkv : {8, 2, 1}) {
    Tensors t(2, 5, 7, 8, hkv, 16);
    EXPECT_TRUE(validate(t.args).ok()) << validate(t.args).to_string();
  }
}

TEST(Validate, NamesFieldAndValues) {
  Tensors t(1, 4, 4, 6, 4, 16);
  expect_error_mentions(t.args, "Hq = q.shape[2] = 6, Hkv = k.shape[2] = 4");
  Tensors u(1, 4, 4, 2, 2, 16);
  u.args.k.shape[3] = 8;
  expect_error_mentions(u.args, "k.shape[3] (D) = 8");
  Tensors w(1, 4, 4, 2, 2, 16);
  w.args.v.data = nullptr;
  expect_error_mentions(w.args, "v.data is null");
  Tensors x(1, 4, 4, 2, 2, 16);
  x.args.out.dtype = DType::kBF16;
  expect_error_mentions(x.args, "out.dtype = bf16 but q.dtype = f32");
  Tensors y(1, 4, 4, 2, 2, 16);
  y.args.softcap = -1;
  expect_error_mentions(y.args, "softcap");
}

TEST(Validate, ChecksCuSeqlens) {
  Tensors t(1, 10, 12, 2, 2, 8);
  int32_t cq[] = {0, 4, 10};
  int32_t ck[] = {0, 7, 11};  // 11 != 12 rows
  t.args.varlen = Varlen{cq, ck, 2};
  expect_error_mentions(t.args, "varlen.cu_seqlens_k[2] = 11 but the packed tensor has 12 rows");
  int32_t ck_bad[] = {0, 7, 5};
  t.args.varlen = Varlen{cq, ck_bad, 2};
  expect_error_mentions(t.args, "varlen.cu_seqlens_k decreases");
  int32_t ck_ok[] = {0, 7, 12};
  t.args.varlen = Varlen{cq, ck_ok, 2};
  EXPECT_TRUE(validate(t.args).ok());
  EXPECT_EQ(dims_of(t.args).sq, 6);
  EXPECT_EQ(dims_of(t.args).sk, 7);
}

TEST(Validate, BiasMustBroadcast) {
  Tensors t(2, 4, 5, 2, 2, 8);
  std::vector<float> bias(size_t{4} * 5);
  t.args.bias = TensorView::contiguous(bias.data(), DType::kF32, {1, 1, 4, 5});
  EXPECT_TRUE(validate(t.args).ok());
  t.args.bias.shape[3] = 3;
  expect_error_mentions(t.args, "bias.shape[3] = 3 must be 1 or Sk = 5");
}

TEST(Mask, CausalIsBottomRightAligned) {
  const Mask m = Mask::causal();
  // Sq = 2, Sk = 5: query 0 sits at key 3.
  EXPECT_TRUE(m.visible(0, 3, 2, 5));
  EXPECT_FALSE(m.visible(0, 4, 2, 5));
  EXPECT_TRUE(m.visible(1, 4, 2, 5));
  // Sq = 5, Sk = 2: the first three queries see nothing.
  EXPECT_FALSE(m.visible(2, 0, 5, 2));
  EXPECT_TRUE(m.visible(3, 0, 5, 2));
  const Mask w = Mask::window(1, 0);
  EXPECT_TRUE(w.visible(4, 3, 5, 5));
  EXPECT_FALSE(w.visible(4, 2, 5, 5));
}

TEST(Flops, CausalCountsVisiblePairsOnly) {
  Tensors t(1, 4, 4, 1, 1, 8);
  EXPECT_DOUBLE_EQ(attention_flops(t.args), 4.0 * 16 * 8);
  t.args.mask = Mask::causal();
  EXPECT_DOUBLE_EQ(attention_flops(t.args), 4.0 * 10 * 8);
}

}  // namespace
}  // namespace tessera
