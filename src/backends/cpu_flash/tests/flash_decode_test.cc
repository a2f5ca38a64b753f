// cpu.flash's decode loop (decode-inl.h): which problems it serves, and that
// it matches reference on them, on every Highway target, with key splits.
// The loop is the f32 products' decode form: on CPUs whose decode ranking
// puts amx first (product_paths.h), bf16 decode runs there unless
// cpu.flash:f32 is asked for, so these tests run the cpu.flash:f32 variant.
#include <gtest/gtest.h>

#include "cpu_flash/cpu_flash_backend.h"
#include "cpu_flash/flash_params.h"
#include "flash_test_util.h"

namespace tessera::flash_test {
namespace {

bool takes_decode_loop(const AttentionCase& c, int threads = 2) {
  const OwnedCase tensors(c);
  EXPECT_TRUE(tensors.status().ok()) << tensors.status().message();
  cpu_flash::FlashParams p;
  cpu_flash::make_params(tensors.args, threads, &p, cpu_flash::Products::kF32);
  return p.decode;
}

// Judged on cpu.flash:f32 (the path the decode loop belongs to).
void expect_matches(const AttentionCase& c, int threads) {
  for (auto& variant : make_cpu_flash_variants()) {
    if (variant->name() != "cpu.flash:f32") continue;
    const std::string failures = compare_on_all_targets(*variant, c, threads);
    EXPECT_TRUE(failures.empty()) << c.name() << " threads=" << threads << "\n" << failures;
    return;
  }
  ADD_FAILURE() << "no cpu.flash:f32 variant";
}

AttentionCase decode_case(DType dtype, int64_t hq, int64_t hkv, int64_t d, int64_t sk) {
  AttentionCase c;
  c.dtype = dtype;
  c.sq = 1;
  c.sk = sk;
  c.hq = hq;
  c.hkv = hkv;
  c.d = c.dv = d;
  c.lse = true;
  return c;
}

// Groups of 1 to 9 heads (the loop takes them 4 at a time), D and Dv not
// multiples of any vector length, masks as key ranges, one to three
// threads (three: splits that do not divide the keys evenly).
TEST(CpuFlashDecode, MatchesReferenceWhereItServes) {
  for (int threads : {1, 2, 3}) {
    for (int64_t group : {1, 3, 4, 9}) {
      AttentionCase c = decode_case(threads == 2 ? DType::kBF16 : DType::kF32, 2 * group, 2,
                                    group == 3 ? 59 : 64, 3001);
      if (group == 9) c.dv = 37;
      c.mask = group == 4 ? Mask::window(700, 0) : Mask::causal();
      ASSERT_TRUE(takes_decode_loop(c, threads)) << c.name();
      expect_matches(c, threads);
    }
  }
}

// A batch of single queries, packed, with an empty query and an empty key
// sequence (its row is zeros, its lse -inf).
TEST(CpuFlashDecode, VarlenSingleQueries) {
  AttentionCase c = decode_case(DType::kF32, 8, 2, 128, 1);
  c.set_varlen({1, 0, 1, 1}, {2000, 3, 0, 77});
  ASSERT_TRUE(takes_decode_loop(c));
  expect_matches(c, 2);
}

// What the decode loop does not take goes to the tile loop (and still
// matches): more than one query, bias, softcap, f16, strided D.
TEST(CpuFlashDecode, OtherProblemsTakeTheTileLoop) {
  AttentionCase two = decode_case(DType::kF32, 4, 2, 64, 500);
  two.sq = 2;
  AttentionCase bias = decode_case(DType::kF32, 4, 2, 64, 500);
  bias.bias = BiasKind::kFull;
  AttentionCase softcap = decode_case(DType::kBF16, 4, 2, 64, 500);
  softcap.softcap = 2.0f;
  AttentionCase half = decode_case(DType::kF16, 4, 2, 64, 500);
  AttentionCase varlen = decode_case(DType::kF32, 4, 2, 64, 1);
  varlen.set_varlen({1, 2}, {300, 300});
  for (const AttentionCase& c : {two, bias, softcap, half, varlen}) {
    EXPECT_FALSE(takes_decode_loop(c)) << c.name();
    expect_matches(c, 2);
  }
}

}  // namespace
}  // namespace tessera::flash_test
