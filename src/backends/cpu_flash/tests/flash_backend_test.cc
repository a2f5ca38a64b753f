// cpu.flash against reference on odd shapes crossed with every feature, on
// every Highway target this CPU supports and every product path it has there
// (see compare_paths_on_all_targets), judged by verify's tolerance rule.
#include <gtest/gtest.h>

#include "flash_test_util.h"

namespace tessera::flash_test {
namespace {

// Plain cpu.flash and every other product path the case can take here.
void expect_matches(const AttentionCase& c, int threads = 2) {
  const std::string failures = compare_paths_on_all_targets(c, threads);
  EXPECT_TRUE(failures.empty()) << c.name() << "\n" << failures;
}

// Sq, Sk in {1, 7, 64, 113, 129, 1000} (tile edges and their neighbours),
// crossed with the odd head dims FlashAttention tests use.
TEST(CpuFlash, MatchesReferenceOnOddShapes) {
  const int64_t lengths[] = {1, 7, 64, 113, 129, 1000};
  const int64_t dims[] = {16, 40, 59, 64, 111, 128, 256};
  int n = 0;
  for (int64_t sq : lengths) {
    for (int64_t sk : lengths) {
      AttentionCase c;
      c.sq = sq;
      c.sk = sk;
      c.d = c.dv = dims[n++ % 7];
      c.hq = c.hkv = 2;
      c.seed = static_cast<uint64_t>(n);
      if (int64_t{sq} * sk * c.d > int64_t{1000} * 1000 * 64) c.hq = c.hkv = 1;  // keep reference quick
      expect_matches(c);
    }
  }
}

TEST(CpuFlash, EveryHeadDimOnOneShape) {
  for (int64_t d : {1, 8, 16, 40, 59, 64, 111, 128, 200, 256}) {
    AttentionCase c;
    c.batch = 2;
    c.sq = 70;
    c.sk = 131;
    c.hq = 3;
    c.hkv = 3;
    c.d = c.dv = d;
    c.lse = true;
    expect_matches(c);
  }
}

TEST(CpuFlash, CausalAndWindowMasks) {
  const Mask masks[] = {Mask::causal(),      Mask::window(16, 0), Mask::window(5, 7),
                        Mask::window(-1, 3), Mask::window(0, 0),  Mask::window(40, -1)};
  const std::pair<int64_t, int64_t> lengths[] = {
      {113, 113}, {7, 129}, {129, 64}, {1, 1000}, {200, 70}};
  for (const Mask& m : masks) {
    for (auto [sq, sk] : lengths) {
      AttentionCase c;
      c.sq = sq;
      c.sk = sk;
      c.hq = 2;
      c.hkv = 1;
      c.d = c.dv = 40;
      c.mask = m;
      c.lse = true;  // rows with no visible key: zeros and lse = -inf
      expect_matches(c);
    }
  }
}

TEST(CpuFlash, GqaAndMqa) {
  const std::pair<int64_t, int64_t> heads[] = {{8, 2}, {12, 3}, {32, 8}, {6, 1}, {96, 1}};
  for (auto [hq, hkv] : heads) {
    for (int64_t sq : {1, 37}) {
      AttentionCase c;
      c.sq = sq;
      c.sk = 150;
      c.hq = hq;
      c.hkv = hkv;
      c.d = c.dv = 32;
      c.mask = sq == 1 ? Mask::none() : Mask::causal();
      c.lse = true;
      expect_matches(c);
    }
  }
}

TEST(CpuFlash, VarlenPackedSequences) {
  AttentionCase c;
  c.hq = 4;
  c.hkv = 2;
  c.d = c.dv = 59;
  c.set_varlen({5, 0, 130, 1, 64}, {9, 3, 130, 200, 0});
  c.lse = true;
  for (const Mask& m : {Mask::none(), Mask::causal(), Mask::window(8, 8)}) {
    c.mask = m;
    expect_matches(c);
  }
  c.mask = Mask::causal();
  c.bias = BiasKind::kFull;
  expect_matches(c);
}

TEST(CpuFlash, AdditiveBiasInEveryBroadcastForm) {
  for (BiasKind bias : {BiasKind::kFull, BiasKind::kKeyStride0, BiasKind::kPerHead}) {
    AttentionCase c;
    c.batch = 2;
    c.sq = 67;
    c.sk = 90;
    c.hq = 4;
    c.hkv = 2;
    c.d = c.dv = 24;
    c.bias = bias;
    c.lse = true;
    expect_matches(c);
    c.mask = Mask::causal();
    expect_matches(c);
  }
}

TEST(CpuFlash, SoftcapAndScale) {
  AttentionCase c;
  c.sq = 77;
  c.sk = 140;
  c.hq = c.hkv = 2;
  c.d = c.dv = 64;
  c.softcap = 5.0f;
  c.scale = 0.9f;  // large scores so the cap bites
  c.lse = true;
  expect_matches(c);
  c.mask = Mask::causal();
  c.bias = BiasKind::kPerHead;
  expect_matches(c);
}

TEST(CpuFlash, LowPrecisionInputs) {
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (auto [sq, sk] : {std::pair<int64_t, int64_t>{113, 129}, {1, 1000}, {64, 7}}) {
      AttentionCase c;
      c.dtype = dtype;
      c.sq = sq;
      c.sk = sk;
      c.hq = 4;
      c.hkv = 2;
      c.d = c.dv = 59;
      c.mask = Mask::causal();
      c.lse = true;
      expect_matches(c);
      c.d = c.dv = 128;
      c.layout = Layout::kDStride2;
      expect_matches(c);
    }
  }
}

TEST(CpuFlash, LayoutsAndStrides) {
  for (Layout layout : {Layout::kBHSD, Layout::kDStride2}) {
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      AttentionCase c;
      c.batch = 2;
      c.sq = 100;
      c.sk = 129;
      c.hq = 4;
      c.hkv = 2;
      c.d = c.dv = 40;
      c.dtype = dtype;
      c.layout = layout;
      c.lse = true;
      expect_matches(c);
    }
  }
}

TEST(CpuFlash, ValueHeadDimDiffers) {
  for (auto [d, dv] : {std::pair<int64_t, int64_t>{64, 32}, {40, 111}, {16, 256}}) {
    AttentionCase c;
    c.sq = 50;
    c.sk = 120;
    c.hq = c.hkv = 2;
    c.d = d;
    c.dv = dv;
    c.mask = Mask::causal();
    expect_matches(c);
  }
}

TEST(CpuFlash, NanQueryRowGivesNanRowOnly) {
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    AttentionCase c;
    c.sq = 70;
    c.sk = 100;
    c.hq = c.hkv = 2;
    c.d = c.dv = 32;
    c.dtype = dtype;
    c.nan_rows = 1;  // one element of one q row
    c.lse = true;
    expect_matches(c);
    c.softcap = 3.0f;
    expect_matches(c);
  }
}

// Few units and many keys: the keys are split across threads and merged by
// log-sum-exp; also one thread (no split) and odd thread counts.
TEST(CpuFlash, DecodeSplitsKeysAcrossThreads) {
  for (int threads : {1, 2, 3}) {
    for (const Mask& m : {Mask::none(), Mask::window(300, 0)}) {
      AttentionCase c;
      c.sq = 1;
      c.sk = 5000;
      c.hq = 4;
      c.hkv = 1;
      c.d = c.dv = 128;
      c.mask = m;
      c.lse = true;
      expect_matches(c, threads);
    }
  }
  AttentionCase c;  // a NaN row and a split
  c.sq = 2;
  c.sk = 3000;
  c.nan_rows = 1;
  c.lse = true;
  expect_matches(c, 2);
}

TEST(CpuFlash, EmptySequences) {
  AttentionCase c;
  c.sq = 5;
  c.sk = 0;
  c.lse = true;
  expect_matches(c);
  c.sq = 0;  // no query rows: nothing to do (lse has no elements, so none)
  c.sk = 5;
  c.lse = false;
  expect_matches(c);
}

// bf16 inputs on every feature: on a CPU with AVX512_BF16 (or AMX) this runs
// every bf16 path and the f32-product path (compare_paths_on_all_targets),
// including window masks whose first visible key sits at an odd tile offset
// and odd key counts (key pairs padded), varlen, bias, softcap, GQA, splits.
TEST(CpuFlash, Bf16InputsOnEveryFeature) {
  std::vector<AttentionCase> cases;
  for (const Mask& m : {Mask::none(), Mask::causal(), Mask::window(5, 7), Mask::window(16, 0),
                        Mask::window(40, -1)}) {
    for (auto [sq, sk] : std::vector<std::pair<int64_t, int64_t>>{{113, 129}, {7, 65}, {1, 1000}}) {
      AttentionCase c;
      c.dtype = DType::kBF16;
      c.sq = sq;
      c.sk = sk;
      c.hq = 4;
      c.hkv = 2;
      c.d = c.dv = 64;
      c.mask = m;
      c.lse = true;
      cases.push_back(c);
    }
  }
  AttentionCase varlen;
  varlen.dtype = DType::kBF16;
  varlen.d = varlen.dv = 32;
  varlen.hq = varlen.hkv = 3;
  varlen.set_varlen({5, 0, 130, 1, 64}, {9, 3, 131, 201, 0});
  varlen.mask = Mask::causal();
  varlen.bias = BiasKind::kShared;  // one [1, Hq, Sq, Sk] bias for every sequence
  cases.push_back(varlen);
  AttentionCase capped;
  capped.dtype = DType::kBF16;
  capped.sq = 70;
  capped.sk = 131;
  capped.d = 40;
  capped.dv = 24;
  capped.softcap = 5.0f;
  capped.bias = BiasKind::kKeyStride0;
  capped.layout = Layout::kDStride2;
  cases.push_back(capped);
  AttentionCase tiled = capped;  // D % 32 == 0, Dv not: the AMX path pads V^T and O^T
  tiled.d = 96;
  cases.push_back(tiled);
  AttentionCase odd_d = capped;  // odd D: the f32-product path on every target
  odd_d.d = 59;
  cases.push_back(odd_d);
  for (const AttentionCase& c : cases) expect_matches(c);
}

}  // namespace
}  // namespace tessera::flash_test
