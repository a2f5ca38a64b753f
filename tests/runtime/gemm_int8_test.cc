// linear() with int8 weights against a float64 product of the f32 inputs.
// gemm_int8.cc quantizes in a rotated basis: x and every row of W times H,
// block-diagonal orthonormal Walsh-Hadamard (blocks of the largest power of
// two dividing K, at most 1024), so x . w = x~ . w~ exactly, and the bound
// comes from the two quantization steps there: w~'s row c is rounded on a
// grid of s_w = max|w~[c,:]| / 127, x~'s row r on a grid of
// s_r = (max(x~_r, 0) - min(x~_r, 0)) / 255, each value within half a step
// (below, x and w stand for the rotated x~ and w~):
//   |x.w - x^.w^| <= (s_w / 2) sum_p |x_p| + (s_r / 2) sum_p |w^_p|,
//   |w^_p| <= |w_p| + s_w / 2,
// plus the f32 arithmetic of the pass that scales the s32 sums (acc and
// z colsum, each up to 255 sum|Wq|, rounded to f32, then 3 more roundings):
//   6 eps s_r s_w 255 sum_p |Wq_p| <= 6 eps 255 s_r sum_p |w^_p| (+ bias and
// accumulate roundings, GELU as in gemm_packed_test.cc), plus the f32
// rotation of x: log2(block) + 1 roundings of sums of |x~| (taken as
// 2 (log2(block) + 1) eps sum_p |x~_p| |w~_p|). A wrong scale, zero point,
// row sum or rotation is off by far more than this bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "runtime/gemm.h"

// A named namespace: the unity build joins this file with gemm_packed_test.cc.
namespace tessera::int8_linear_test {

constexpr double kEps = 1.0 / 16777216;  // f32 unit roundoff, 2^-24
constexpr double kGeluLipschitz = 1.13;  // max |GELU'(z)|
constexpr double kGeluAbsolute = 2e-6;   // erf evaluation, times max(1, |z|)
constexpr float kGuard = -12345.0f;

double gelu64(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }

struct Case {
  int64_t m, n, k;
};

struct Variant {
  bool bias, gelu, accumulate;
  int threads;
  float x_shift;  // added to every x: rows that are all positive need the zero point
};

// The rotation, in double: v <- v H over blocks of `block`.
int64_t rotation_block(int64_t k) {
  int64_t b = 1;
  while (b < 1024 && k % (2 * b) == 0) b *= 2;
  return b;
}

std::vector<double> rotated(const float* v, int64_t k) {
  std::vector<double> u(v, v + k);
  const int64_t block = rotation_block(k);
  for (int64_t b0 = 0; b0 < k; b0 += block) {
    for (int64_t h = 1; h < block; h *= 2) {
      for (int64_t i = b0; i < b0 + block; i += 2 * h) {
        for (int64_t j = i; j < i + h; ++j) {
          const double a = u[j], c = u[j + h];
          u[j] = a + c;
          u[j + h] = a - c;
        }
      }
    }
  }
  for (double& e : u) e /= std::sqrt(static_cast<double>(block));
  return u;
}

bool int8_runs_here(std::string* why) {
  *why = int8_refusal(Int8Isa::of_this_cpu(), linear_kernel(WeightType::kInt8));
  return why->empty();
}

// Returns the worst |error| / bound over the case.
double check_case(const Case& c, const Variant& v, TrackingAllocator& alloc) {
  std::mt19937 rng(static_cast<uint32_t>(c.m * 7919 + c.n * 31 + c.k));
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-4, 2);
  auto value = [&] { return std::ldexp(mant(rng), expo(rng)); };
  std::vector<float> w(c.n * c.k), x(c.m * c.k), b(c.n), y((c.m + 1) * c.n, kGuard);
  for (float& e : w) e = value();
  for (float& e : x) e = value() + v.x_shift;
  for (float& e : b) e = value();
  if (v.accumulate) {
    for (int64_t i = 0; i < c.m * c.n; ++i) y[i] = value();
  }
  const std::vector<float> y_old = y;

  PackedWeights pw;
  const Status made =
      PackedWeights::create(w.data(), c.n, c.k, WeightType::kInt8, alloc, "test.weights", &pw);
  EXPECT_TRUE(made.ok()) << made.to_string();
  if (!made.ok()) return 0;
  // A quarter of f32's bytes: the s8 values (the library pads N and K to its
  // blocks, at most 64) plus two floats per channel.
  const auto pad = [](int64_t v) { return (v + 63) / 64 * 64; };
  EXPECT_GE(pw.bytes(), static_cast<size_t>(c.n * c.k + 8 * c.n));
  EXPECT_LE(pw.bytes(), static_cast<size_t>(pad(c.n) * pad(c.k) + 8 * c.n + 4096));
  const LinearEpilogue e{v.bias ? b.data() : nullptr, v.gelu, v.accumulate};
  size_t bytes = 0;
  EXPECT_TRUE(linear_workspace_bytes(v.threads, c.m, pw, e, &bytes).ok());
  Buffer work;
  EXPECT_TRUE(Buffer::allocate(alloc, bytes, "test.workspace", &work).ok());
  ThreadPool pool(v.threads);
  const Status st = linear(pool, c.m, x.data(), pw, e, y.data(), work.data(), bytes);
  EXPECT_TRUE(st.ok()) << st.to_string();

  const double rotation_roundings = std::log2(static_cast<double>(rotation_block(c.k))) + 1;
  std::vector<double> s_w(c.n);
  std::vector<std::vector<double>> wt(c.n);
  for (int64_t j = 0; j < c.n; ++j) {
    wt[j] = rotated(&w[j * c.k], c.k);
    double absmax = 0;
    for (double e : wt[j]) absmax = std::max(absmax, std::fabs(e));
    s_w[j] = absmax / 127;
  }
  double worst = 0;
  int64_t wi = -1, wj = -1;
  for (int64_t i = 0; i < c.m; ++i) {
    const float* xr = &x[i * c.k];
    const std::vector<double> xt = rotated(xr, c.k);
    const double lo = std::min(0.0, *std::min_element(xt.begin(), xt.end()));
    const double hi = std::max(0.0, *std::max_element(xt.begin(), xt.end()));
    const double s_r = (hi - lo) / 255;
    for (int64_t j = 0; j < c.n; ++j) {
      double z = v.bias ? b[j] : 0.0, sum_x = 0, sum_w = 0, sum_xw = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        z += double(xr[p]) * w[j * c.k + p];
        sum_x += std::fabs(xt[p]);
        sum_w += std::fabs(wt[j][p]) + s_w[j] / 2;
        sum_xw += std::fabs(xt[p] * wt[j][p]);
      }
      // s_r is computed in f32 from the f32 rotation: widen it a little.
      double bound = s_w[j] / 2 * sum_x + (s_r / 2) * (1 + 1e-5) * sum_w +
                     6 * kEps * 255 * s_r * sum_w + 2 * rotation_roundings * kEps * sum_xw +
                     (v.bias ? 2 * kEps * std::fabs(b[j]) : 0.0) + 1e-30;
      double ref = z;
      if (v.gelu) {
        ref = gelu64(z);
        bound = kGeluLipschitz * bound + kGeluAbsolute * std::max(1.0, std::fabs(z));
      }
      if (v.accumulate) {
        ref += y_old[i * c.n + j];
        bound += kEps * std::fabs(ref);
      }
      const double ratio = std::fabs(y[i * c.n + j] - ref) / bound;
      if (!(ratio <= worst)) worst = ratio, wi = i, wj = j;
    }
  }
  for (int64_t j = 0; j < c.n; ++j) {
    if (y[c.m * c.n + j] != kGuard) {
      ADD_FAILURE() << "the guard row after row " << c.m - 1 << " was written (column " << j << ")";
      break;
    }
  }
  EXPECT_LE(worst, 1.0) << "M=" << c.m << " N=" << c.n << " K=" << c.k << ": element (" << wi
                        << ", " << wj << ") is " << worst << " x the bound";
  return worst;
}

// Odd sizes, the encoder's shapes, M below, at and across the 64-row blocks
// and the per-thread pieces (2100 rows on 3 threads: 704 + 704 + 692).
constexpr Case kCases[] = {{1, 7, 5},        {3, 33, 64},     {17, 384, 385}, {64, 1152, 384},
                           {129, 384, 1536}, {70, 1536, 384}, {2100, 20, 48}};

TEST(LinearInt8, WithinTheQuantizationBound) {
  std::string why;
  if (!int8_runs_here(&why)) GTEST_SKIP() << why;
  TrackingAllocator alloc;
  const Variant variants[] = {{false, false, false, 1, 0.0f}, {true, false, false, 2, 0.0f},
                              {true, true, false, 2, 0.0f},   {true, false, true, 3, 0.0f},
                              {false, false, true, 1, 0.0f},  {true, true, false, 3, 0.0f},
                              {true, false, false, 2, 3.0f},  {false, false, false, 1, -3.0f}};
  for (const Variant& v : variants) {
    for (const Case& c : kCases) {
      const double worst = check_case(c, v, alloc);
      std::printf(
          "[ int8 ] M=%lld N=%lld K=%lld%s%s%s shift %g threads %d: worst %.3f of the "
          "bound\n",
          static_cast<long long>(c.m), static_cast<long long>(c.n), static_cast<long long>(c.k),
          v.bias ? " +bias" : "", v.gelu ? " +gelu" : "", v.accumulate ? " +accumulate" : "",
          v.x_shift, v.threads, worst);
    }
  }
  EXPECT_EQ(alloc.live_bytes(), 0u);
  EXPECT_TRUE(alloc.leaks().empty());
}

// The quantization is not a no-op: an x between two grid points moves.
// And a row of zeros (padding, an all-zero token) gives exactly the bias.
TEST(LinearInt8, ZeroRowsGiveTheBiasExactly) {
  std::string why;
  if (!int8_runs_here(&why)) GTEST_SKIP() << why;
  TrackingAllocator alloc;
  const int64_t n = 5, k = 9, m = 3;
  std::vector<float> w(n * k), x(m * k, 0.0f), b = {0.5f, -1.0f, 2.0f, 0.0f, 3.25f}, y(m * n);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(i) - 2.0f;
  PackedWeights pw;
  ASSERT_TRUE(PackedWeights::create(w.data(), n, k, WeightType::kInt8, alloc, "t", &pw).ok());
  const LinearEpilogue e{b.data(), false, false};
  size_t bytes = 0;
  ASSERT_TRUE(linear_workspace_bytes(2, m, pw, e, &bytes).ok());
  Buffer work;
  ASSERT_TRUE(Buffer::allocate(alloc, bytes, "test.workspace", &work).ok());
  ThreadPool pool(2);
  ASSERT_TRUE(linear(pool, m, x.data(), pw, e, y.data(), work.data(), bytes).ok());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) EXPECT_EQ(y[i * n + j], b[j]) << i << "," << j;
  }
}

// unpack() gives the quantized weights: within half a step of each row's grid
// (K = 19: no rotation).
TEST(LinearInt8, UnpackGivesTheQuantizedWeights) {
  std::string why;
  if (!int8_runs_here(&why)) GTEST_SKIP() << why;
  TrackingAllocator alloc;
  const int64_t n = 37, k = 19;
  std::vector<float> w(n * k);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.37f * static_cast<float>(i % 23) - 4.0f;
  PackedWeights pw;
  ASSERT_TRUE(PackedWeights::create(w.data(), n, k, WeightType::kInt8, alloc, "t", &pw).ok());
  EXPECT_EQ(pw.type(), WeightType::kInt8);
  std::vector<float> back(w.size());
  ASSERT_TRUE(pw.unpack(back.data()).ok());
  for (int64_t c = 0; c < n; ++c) {
    float absmax = 0;
    for (int64_t p = 0; p < k; ++p) absmax = std::max(absmax, std::fabs(w[c * k + p]));
    for (int64_t p = 0; p < k; ++p) {
      ASSERT_LE(std::fabs(back[c * k + p] - w[c * k + p]), absmax / 127 / 2 * 1.0001f) << c;
    }
  }
  pw = PackedWeights();
  EXPECT_EQ(alloc.live_bytes(), 0u);
}

// The refusal names what is missing: the instructions, or the reference kernel.
TEST(LinearInt8, RefusalNamesTheMissingInstructions) {
  const std::string none = int8_refusal(Int8Isa{}, "brg:avx512_core_vnni");
  EXPECT_NE(none.find("AMX-INT8, AVX512_VNNI or AVX-VNNI"), std::string::npos) << none;
  EXPECT_NE(none.find("none of them is available"), std::string::npos) << none;
  Int8Isa vnni;
  vnni.avx512_vnni = true;
  const std::string ref = int8_refusal(vnni, "ref_int8:any");
  EXPECT_NE(ref.find("'ref_int8:any'"), std::string::npos) << ref;
  EXPECT_NE(int8_refusal(vnni, "none"), "");
  EXPECT_EQ(int8_refusal(vnni, "brg:avx512_core_vnni"), "");
  Int8Isa avx_vnni;
  avx_vnni.avx_vnni = true;
  EXPECT_EQ(int8_refusal(avx_vnni, "gemm:jit"), "");
  Int8Isa amx;
  amx.amx_int8 = true;
  EXPECT_EQ(int8_refusal(amx, "brg:avx512_core_amx_int8"), "");
}

// On this CPU: either int8 runs on a fast kernel (not reference loops), or
// PackedWeights refuses it with the refusal's message.
TEST(LinearInt8, RunsOnAFastKernelOrIsRefused) {
  const std::string kernel = linear_kernel(WeightType::kInt8);
  const std::string why = int8_refusal(Int8Isa::of_this_cpu(), kernel);
  std::printf("[ int8 ] kernel %s%s%s\n", kernel.c_str(), why.empty() ? "" : ": ", why.c_str());
  TrackingAllocator alloc;
  const std::vector<float> w(64, 1.0f);
  PackedWeights pw;
  const Status st = PackedWeights::create(w.data(), 8, 8, WeightType::kInt8, alloc, "t", &pw);
  if (why.empty()) {
    EXPECT_TRUE(st.ok()) << st.to_string();
    EXPECT_EQ(kernel.rfind("ref", 0), std::string::npos) << kernel;
  } else {
    EXPECT_EQ(st.code(), StatusCode::kUnsupported);
    EXPECT_EQ(st.message(), why);
  }
}

// bf16 activations: a bf16 x gives exactly what its values give as f32 (the
// same u8 rows), and a bf16 y is the f32 result rounded once (after the
// residual add where there is one), bit for bit.
TEST(LinearInt8, Bf16ActivationsAreTheF32ResultRounded) {
  std::string why;
  if (!int8_runs_here(&why)) GTEST_SKIP() << why;
  TrackingAllocator alloc;
  const int64_t m = 131, n = 48, k = 64;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> w(n * k), x(m * k), b(n), y0(m * n);
  for (float& v : w) v = u(rng);
  for (float& v : b) v = u(rng);
  std::vector<uint16_t> xb(x.size()), y0b(y0.size());
  for (size_t i = 0; i < x.size(); ++i) {
    xb[i] = f32_to_bf16(u(rng));
    x[i] = bf16_to_f32(xb[i]);  // the values the bf16 call sees
  }
  for (size_t i = 0; i < y0.size(); ++i) {
    y0b[i] = f32_to_bf16(u(rng));
    y0[i] = bf16_to_f32(y0b[i]);
  }
  PackedWeights pw;
  ASSERT_TRUE(PackedWeights::create(w.data(), n, k, WeightType::kInt8, alloc, "t", &pw).ok());
  ThreadPool pool(2);
  for (const LinearEpilogue e : {LinearEpilogue{b.data(), true, false},
                                 LinearEpilogue{b.data(), false, true}}) {
    SCOPED_TRACE(e.gelu ? "gelu" : "accumulate");
    size_t bytes = 0;
    ASSERT_TRUE(linear_workspace_bytes(2, m, pw, e, &bytes).ok());
    Buffer work;
    ASSERT_TRUE(Buffer::allocate(alloc, bytes, "test.workspace", &work).ok());
    // The reference: f32 in and out, y starting at y0 (for the residual).
    std::vector<float> ref = y0;
    ASSERT_TRUE(linear(pool, m, x.data(), pw, e, ref.data(), work.data(), bytes).ok());
    std::vector<float> got = y0;
    ASSERT_TRUE(linear(pool, m, LinearTypes{DType::kBF16, DType::kF32}, xb.data(), pw, e,
                       got.data(), work.data(), bytes)
                    .ok());
    for (size_t i = 0; i < ref.size(); ++i) ASSERT_EQ(got[i], ref[i]) << "bf16 x, f32 y: " << i;
    // bf16 y: the residual is added in f32, then rounded once.
    std::vector<float> plain(m * n);
    const LinearEpilogue no_residual{e.bias, e.gelu, false};
    ASSERT_TRUE(linear(pool, m, x.data(), pw, no_residual, plain.data(), work.data(), bytes).ok());
    std::vector<uint16_t> yb = y0b;
    ASSERT_TRUE(linear(pool, m, LinearTypes{DType::kBF16, DType::kBF16}, xb.data(), pw, e,
                       yb.data(), work.data(), bytes)
                    .ok());
    for (size_t i = 0; i < yb.size(); ++i) {
      const float want = e.accumulate ? y0[i] + plain[i] : plain[i];
      ASSERT_EQ(yb[i], f32_to_bf16(want)) << "bf16 y: " << i;
    }
  }
  pw = PackedWeights();
  EXPECT_EQ(alloc.live_bytes(), 0u);
}

}  // namespace tessera::int8_linear_test
