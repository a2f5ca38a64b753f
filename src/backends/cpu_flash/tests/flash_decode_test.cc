// cpu.flash's decode loop (decode-inl.h): which problems it serves, and that
// it matches reference on them, on every Highway target, with key splits.
// The loop serves the f32 products and, for bf16, the bf16dot path (its
// scores on the bf16 dot product); amx takes the tile loop. The tests run
// the variants (cpu.flash:f32, cpu.flash:bf16dot) so that what they check
// does not depend on this CPU's default path.
#include <gtest/gtest.h>

#include "cpu_flash/cpu_flash_backend.h"
#include "cpu_flash/flash_params.h"
#include "cpu_flash/product_paths.h"
#include "flash_test_util.h"

namespace tessera::flash_test {
namespace {

bool takes_decode_loop(const AttentionCase& c, int threads = 2,
                       cpu_flash::Products path = cpu_flash::Products::kF32) {
  const OwnedCase tensors(c);
  EXPECT_TRUE(tensors.status().ok()) << tensors.status().message();
  cpu_flash::FlashParams p;
  cpu_flash::make_params(tensors.args, threads, &p, path);
  return p.decode && p.products == path;
}

// Judged on a variant: cpu.flash:f32 by default (the path the decode loop
// was written for).
void expect_matches(const AttentionCase& c, int threads,
                    const std::string& variant_name = "cpu.flash:f32") {
  for (auto& variant : make_cpu_flash_variants()) {
    if (variant->name() != variant_name) continue;
    const std::string failures = compare_on_all_targets(*variant, c, threads);
    EXPECT_TRUE(failures.empty()) << c.name() << " threads=" << threads << "\n" << failures;
    return;
  }
  ADD_FAILURE() << "no " << variant_name << " variant";
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

// The bf16dot path's decode form: scores on the bf16 dot product (32
// elements per instruction, a masked tail where D % 32 != 0), P V as f32.
// On targets without the instruction the variant's kernel takes the f32
// products (compare_on_all_targets runs each target this CPU has).
TEST(CpuFlashDecode, Bf16DotScoresMatchReference) {
  if (!cpu_flash::path_available(cpu_flash::Products::kBf16Dot)) {
    GTEST_SKIP() << cpu_flash::path_unavailable_reason(cpu_flash::Products::kBf16Dot);
  }
  struct Shape {
    int64_t group, d, sk;
    int threads;
  };
  for (const Shape& sh : {Shape{1, 64, 3001, 1}, Shape{2, 48, 777, 2}, Shape{3, 130, 1500, 3},
                          Shape{4, 128, 4099, 2}, Shape{9, 34, 640, 2}, Shape{4, 2, 90, 1}}) {
    AttentionCase c = decode_case(DType::kBF16, 2 * sh.group, 2, sh.d, sh.sk);
    c.mask = sh.group == 4 ? Mask::window(700, 0) : Mask::causal();
    ASSERT_TRUE(takes_decode_loop(c, sh.threads, cpu_flash::Products::kBf16Dot)) << c.name();
    expect_matches(c, sh.threads, "cpu.flash:bf16dot");
  }
  AttentionCase varlen = decode_case(DType::kBF16, 8, 2, 96, 1);
  varlen.set_varlen({1, 0, 1, 1}, {2000, 3, 0, 77});
  ASSERT_TRUE(takes_decode_loop(varlen, 2, cpu_flash::Products::kBf16Dot));
  expect_matches(varlen, 2, "cpu.flash:bf16dot");
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
