// cpu.flash SIMD building blocks on every compiled Highway target
// (HWY_EXPORT_AND_TEST_P): every length 0..2N+1 with misaligned inputs,
// against scalar float64 / the shared scalar conversions.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "flash_simd_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// Order matters: each -inl.h uses the ones before it.
#include "cpu_flash/convert-inl.h"
#include "cpu_flash/exp2-inl.h"
#include "cpu_flash/tile_gemm-inl.h"
#include "cpu_flash/online_softmax-inl.h"
#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {

using DF = hn::CappedTag<float, kMaxLanes>;

std::vector<float> RandomFloats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// C = A * B (+ C * row_scale) for m in 0..2*kMicroRows+1, n in 1..4 vectors,
// k in 0..2N+1; A row- and column-major and offset by one float; B rows
// offset by one float (unaligned loads). Error bound: k * 2u * sum |a b|.
template <bool kScaleC>
void CheckTileGemm() {
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  for (int64_t m = 0; m <= 2 * kMicroRows + 1; ++m) {
    for (int64_t n = lanes; n <= 4 * lanes; n += lanes) {
      for (int64_t k = 0; k <= 2 * lanes + 1; ++k) {
        for (bool a_col_major : {false, true}) {
          const std::vector<float> a_store = RandomFloats(m * k + 1, 1 + m * 7 + k);
          const float* a = a_store.data() + 1;  // misaligned
          const StridedA sa = a_col_major ? StridedA{a, 1, m} : StridedA{a, k, 1};
          const int64_t ldb = n + 1;
          const std::vector<float> b_store = RandomFloats(k * ldb + 1, 2 + n + k);
          const float* b = b_store.data() + 1;
          const std::vector<float> scale = RandomFloats(m + 1, 3);
          auto c = hwy::AllocateAligned<float>(static_cast<size_t>((m + 1) * n));
          const std::vector<float> c0 = RandomFloats((m + 1) * n, 4);
          for (int64_t i = 0; i < (m + 1) * n; ++i) c[i] = c0[i];
          TileGemm<kScaleC>(df, m, n, k, sa, b, ldb, c.get(), n, scale.data());
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              double want = kScaleC ? double{c0[i * n + j]} * scale[i] : 0.0;
              double magnitude = std::fabs(want);
              for (int64_t kk = 0; kk < k; ++kk) {
                const double ab = double{sa.base[i * sa.row + kk * sa.col]} * b[kk * ldb + j];
                want += ab;
                magnitude += std::fabs(ab);
              }
              const double bound = (k + 2) * 2 * 0x1p-24 * magnitude + 1e-30;
              ASSERT_LE(std::fabs(c[i * n + j] - want), bound)
                  << "m=" << m << " n=" << n << " k=" << k << " i=" << i << " j=" << j;
            }
          }
          for (int64_t j = 0; j < n; ++j) {  // the row after m is untouched
            ASSERT_EQ(c[m * n + j], c0[m * n + j]) << "wrote past row m=" << m;
          }
        }
      }
    }
  }
}

void TestTileGemm() { CheckTileGemm<false>(); }
void TestTileGemmScaled() { CheckTileGemm<true>(); }

// Row conversions for n in 0..2N+1, strides 1 and 3, misaligned, with the
// special values a kernel must keep (inf, NaN, f16 subnormals, -0) and
// bf16 rounding ties (to even: down from 0x3F808000, up from 0x3F818000).
void TestRowConversions() {
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const float specials[] = {std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), -0.0f, 3e-6f, 65504.0f,
                            2.0078125f, -2.0234375f};
  constexpr int64_t kSpecials = sizeof(specials) / sizeof(specials[0]);
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (int64_t stride : {1, 3}) {
      for (int64_t n = 0; n <= 2 * lanes + 1; ++n) {
        std::vector<float> values = RandomFloats(n, n + 10);
        for (int64_t i = 0; i < n && i < kSpecials; ++i) values[(i * 5) % n] = specials[i];
        std::vector<uint8_t> src((n * stride + 1) * 4);
        void* base = src.data() + dtype_size(dtype);  // misaligned by one element
        for (int64_t i = 0; i < n; ++i) store_from_f32(base, i * stride, dtype, values[i]);
        std::vector<float> got(n + 1, -1.0f);
        RowToF32(df, base, dtype, stride, n, got.data() + 1);
        for (int64_t i = 0; i < n; ++i) {
          const float want = load_as_f32(base, i * stride, dtype);
          if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(got[i + 1])) << dtype_name(dtype) << " n=" << n << " i=" << i;
          } else {
            ASSERT_EQ(got[i + 1], want) << dtype_name(dtype) << " n=" << n << " i=" << i;
          }
        }
        // Back from the unrounded f32 values: dst = dtype(src * mul), bit
        // for bit what store_from_f32 writes (NaN included).
        std::vector<float> unrounded(n + 1);
        std::copy(values.begin(), values.end(), unrounded.begin() + 1);
        std::vector<uint8_t> dst((n * stride + 1) * 4, 0xee);
        void* dbase = dst.data() + dtype_size(dtype);
        RowFromF32(df, unrounded.data() + 1, 0.5f, dbase, dtype, stride, n);
        const size_t size = dtype_size(dtype);
        for (int64_t i = 0; i < n; ++i) {
          std::vector<uint8_t> one(4);
          store_from_f32(one.data(), 0, dtype, values[i] * 0.5f);
          ASSERT_EQ(std::memcmp(static_cast<const uint8_t*>(dbase) + i * stride * size, one.data(),
                                size),
                    0)
              << dtype_name(dtype) << " n=" << n << " i=" << i << " value " << values[i];
        }
      }
    }
  }
}

// One online-softmax step against float64 for every flag combination, tile
// heights 0..2N+1, a prior state that includes empty rows (m = -inf).
// Scores are raw q.k in, probabilities of log2-unit scores out (see
// online_softmax-inl.h).
void TestSoftmaxTile() {
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const int64_t ld = 2 * lanes;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const double log2e = 1.4426950408889634;
  for (int flags = 0; flags < 8; ++flags) {
    const bool softcap = flags & 4, has_bias = flags & 2, masked = flags & 1;
    for (int64_t kb = 0; kb <= 2 * lanes + 1; ++kb) {
      const int64_t key0 = 5;
      std::vector<float> s0 = RandomFloats(kb * ld, kb + int64_t{100} * flags);
      for (float& x : s0) x *= 4.0f;
      auto st = hwy::AllocateAligned<float>(std::max<int64_t>(1, kb * ld));
      for (int64_t i = 0; i < kb * ld; ++i) st[i] = s0[i];
      auto state = hwy::AllocateAligned<float>(5 * ld);
      float *m = state.get(), *l = m + ld, *alpha = l + ld, *lo = alpha + ld, *hi = lo + ld;
      const std::vector<float> bias_values = RandomFloats(ld * 64, 9);
      std::vector<int64_t> row_offset(ld);
      for (int64_t c = 0; c < ld; ++c) {
        m[c] = c % 3 == 0 ? neg_inf : static_cast<float>(c % 5) - 2.0f;
        l[c] = m[c] == neg_inf ? 0.0f : 1.5f;
        lo[c] = static_cast<float>(key0 + c % 4);
        hi[c] = static_cast<float>(key0 + 2 + c % 7);
        row_offset[c] = c * 64;
      }
      const std::vector<float> m0(m, m + ld), l0(l, l + ld);
      const ScoreTransform tf{0.7f, softcap ? 2.5f : 0.0f};
      const BiasRows bias{bias_values.data(), row_offset.data(), 1};
      SoftmaxTileDispatch(df, softcap, has_bias, masked, st.get(), ld, ld, kb, key0, tf, bias,
                          SoftmaxRows{m, l, alpha, lo, hi});
      for (int64_t c = 0; c < ld; ++c) {
        std::vector<double> s(kb);
        double mx = m0[c];
        for (int64_t j = 0; j < kb; ++j) {
          double x = double{s0[j * ld + c]} * tf.scale;
          x = softcap ? tf.softcap * log2e * std::tanh(x / tf.softcap) : x * log2e;
          if (has_bias) x += bias_values[row_offset[c] + key0 + j] * log2e;
          const bool visible = key0 + j >= lo[c] && key0 + j <= hi[c];
          s[j] = masked && !visible ? -INFINITY : x;
          mx = std::max(mx, s[j]);
        }
        if (mx == -INFINITY) {
          ASSERT_EQ(m[c], neg_inf) << "flags=" << flags << " kb=" << kb;
        } else {
          ASSERT_NEAR(m[c], mx, 4e-6 * (1.0 + std::fabs(mx))) << "flags=" << flags;
        }
        const double m_safe = mx == -INFINITY ? 0.0 : mx;
        const double a = std::exp2(m0[c] - m_safe);
        double sum = l0[c] * a;
        for (int64_t j = 0; j < kb; ++j) {
          const double p = std::exp2(s[j] - m_safe);
          sum += p;
          ASSERT_NEAR(st[j * ld + c], p, 4e-6 * p + 1e-30) << "flags=" << flags << " j=" << j;
        }
        ASSERT_NEAR(alpha[c], a, 4e-6 * a) << "flags=" << flags << " c=" << c;
        ASSERT_NEAR(l[c], sum, 4e-6 * sum) << "flags=" << flags << " c=" << c;
      }
    }
  }
}

// FastExp2 over its whole domain x <= 0: within 2 ulp of 2^x where 2^x is
// a normal float, 0 for -inf, exactly 1 at 0, never above 2^-126 below it.
void TestFastExp2() {
  const DF df;
  const size_t lanes = hn::Lanes(df);
  HWY_ALIGN float in[kMaxLanes], out[kMaxLanes];
  double worst = 0;
  for (int64_t step = 0; step <= 2000000; step += static_cast<int64_t>(lanes)) {
    for (size_t i = 0; i < lanes; ++i) in[i] = -130.0f * static_cast<float>(step + i) / 2e6f;
    hn::Store(FastExp2(df, hn::Load(df, in)), df, out);
    for (size_t i = 0; i < lanes; ++i) {
      const double want = std::exp2(static_cast<double>(in[i]));
      if (in[i] >= -126.0f) {
        worst = std::max(worst, std::fabs(out[i] - want) / want);
      } else {
        ASSERT_LE(out[i], 0x1p-126f) << in[i];
        ASSERT_GE(out[i], 0.0f) << in[i];
      }
    }
  }
  EXPECT_LE(worst, 2 * 0x1p-24) << "worst relative error of FastExp2";
  for (const float x : {0.0f, -std::numeric_limits<float>::infinity()}) {
    hn::Store(FastExp2(df, hn::Set(df, x)), df, out);
    EXPECT_EQ(out[0], x == 0.0f ? 1.0f : 0.0f) << x;
  }
  if (kExp2KeepsNaN) {  // the softmax relies on it there to find NaN scores
    hn::Store(FastExp2(df, hn::Set(df, std::numeric_limits<float>::quiet_NaN())), df, out);
    EXPECT_TRUE(std::isnan(out[0]));
  }
}

// A NaN score poisons its row's sum (and only that row's).
void TestSoftmaxTileNaN() {
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const int64_t ld = lanes, kb = 3;
  auto st = hwy::AllocateAligned<float>(kb * ld);
  auto state = hwy::AllocateAligned<float>(5 * ld);
  float *m = state.get(), *l = m + ld, *alpha = l + ld, *lo = alpha + ld, *hi = lo + ld;
  for (int64_t i = 0; i < kb * ld; ++i) st[i] = 0.25f * static_cast<float>(i % 7);
  st[1 * ld + 0] = std::numeric_limits<float>::quiet_NaN();  // key 1 of row 0
  for (int64_t c = 0; c < ld; ++c) {
    m[c] = -std::numeric_limits<float>::infinity();
    l[c] = 0.0f;
  }
  for (bool softcap : {false, true}) {
    SoftmaxTileDispatch(df, softcap, false, false, st.get(), ld, ld, kb, 0,
                        ScoreTransform{1.0f, softcap ? 4.0f : 0.0f}, BiasRows{},
                        SoftmaxRows{m, l, alpha, lo, hi});
    ASSERT_TRUE(std::isnan(l[0]));
    for (int64_t c = 1; c < ld; ++c) ASSERT_TRUE(std::isfinite(l[c])) << c;
  }
}

// cols < ld: the first vector of columns becomes probabilities and the
// padding columns past it are left as they were (scores, m, l, alpha).
void TestSoftmaxTileColumns() {
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const int64_t ld = 3 * lanes, cols = lanes, kb = 5;
  auto st = hwy::AllocateAligned<float>(kb * ld);
  auto state = hwy::AllocateAligned<float>(5 * ld);
  float *m = state.get(), *l = m + ld, *alpha = l + ld, *lo = alpha + ld, *hi = lo + ld;
  for (int64_t i = 0; i < kb * ld; ++i) st[i] = 0.5f * static_cast<float>(i % 5) - 1.0f;
  for (int64_t i = 0; i < 5 * ld; ++i) state[i] = 7.0f;  // a marker no softmax writes
  for (int64_t c = 0; c < cols; ++c) {
    m[c] = -std::numeric_limits<float>::infinity();
    l[c] = 0.0f;
  }
  const std::vector<float> s0(st.get(), st.get() + kb * ld);
  SoftmaxTileDispatch(df, false, false, false, st.get(), ld, cols, kb, 0, ScoreTransform{1.0f, 0.0f},
                      BiasRows{}, SoftmaxRows{m, l, alpha, lo, hi});
  for (int64_t c = 0; c < ld; ++c) {
    float sum = 0.0f;
    for (int64_t j = 0; j < kb; ++j) {
      if (c < cols) {
        sum += st[j * ld + c];
      } else {
        ASSERT_EQ(st[j * ld + c], s0[j * ld + c]) << "key " << j << ", column " << c;
      }
    }
    if (c < cols) {
      EXPECT_NEAR(sum, l[c], 1e-5f * l[c]) << c;  // m is the max: l >= 1
      EXPECT_GE(l[c], 1.0f) << c;
    } else {
      EXPECT_EQ(m[c], 7.0f) << c;
      EXPECT_EQ(l[c], 7.0f) << c;
      EXPECT_EQ(alpha[c], 7.0f) << c;
    }
  }
}

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessera::cpu_flash {
HWY_BEFORE_TEST(CpuFlashSimd);
HWY_EXPORT_AND_TEST_P(CpuFlashSimd, TestTileGemm);
HWY_EXPORT_AND_TEST_P(CpuFlashSimd, TestTileGemmScaled);
HWY_EXPORT_AND_TEST_P(CpuFlashSimd, TestRowConversions);
HWY_EXPORT_AND_TEST_P(CpuFlashSimd, TestSoftmaxTile);
HWY_EXPORT_AND_TEST_P(CpuFlashSimd, TestSoftmaxTileNaN);
HWY_EXPORT_AND_TEST_P(CpuFlashSimd, TestSoftmaxTileColumns);
HWY_EXPORT_AND_TEST_P(CpuFlashSimd, TestFastExp2);
}  // namespace tessera::cpu_flash
#endif  // HWY_ONCE
