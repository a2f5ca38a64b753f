// cpu.flash on small problems: make_params runs them on the calling thread
// (FlashParams::inline_run, one scratch, no key splits), and that path must
// match reference like the pooled one: both dtypes, causal and none, GQA, a
// window mask, block rows that are and are not whole vectors (the Q^T
// gathers and their scalar tail), on every target and product path. Small
// problems also skip the tile loop's prefetches.
#include <gtest/gtest.h>

#include "cpu_flash/flash_params.h"
#include "flash_test_util.h"

namespace tessera::flash_test {
namespace {

bool runs_inline(const AttentionCase& c, int threads) {
  const OwnedCase tensors(c);
  EXPECT_TRUE(tensors.status().ok()) << tensors.status().message();
  cpu_flash::FlashParams p;
  cpu_flash::make_params(tensors.args, threads, &p);
  if (p.inline_run) {
    EXPECT_EQ(p.splits, 1) << c.name();
    EXPECT_EQ(cpu_flash::workspace_bytes(p, threads), cpu_flash::workspace_bytes(p, 1));
  }
  return p.inline_run;
}

AttentionCase small_case(DType dtype, int64_t s, int64_t hq, int64_t hkv, const Mask& mask) {
  AttentionCase c;
  c.dtype = dtype;
  c.sq = c.sk = s;
  c.hq = hq;
  c.hkv = hkv;
  c.d = c.dv = 32;
  c.mask = mask;
  c.lse = true;
  return c;
}

TEST(CpuFlashSmall, SmallProblemsRunInlineAndMatchReference) {
  const Mask masks[] = {Mask::none(), Mask::causal(), Mask::window(3, 0)};
  // {S, Hq, Hkv}: 16 rows per block (whole vectors), 5 rows, 12 rows (GQA:
  // 4 heads x 3 positions) and 48 rows (4 heads x 12 positions).
  const int64_t shapes[][3] = {{16, 2, 2}, {5, 8, 8}, {3, 8, 2}, {12, 4, 1}};
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    for (const Mask& m : masks) {
      for (const auto& shape : shapes) {
        const AttentionCase c = small_case(dtype, shape[0], shape[1], shape[2], m);
        for (int threads : {2, 3}) {
          EXPECT_TRUE(runs_inline(c, threads)) << c.name();
          const std::string failures = compare_paths_on_all_targets(c, threads);
          EXPECT_TRUE(failures.empty()) << c.name() << " threads=" << threads << "\n" << failures;
        }
      }
    }
  }
}

TEST(CpuFlashSmall, LargerProblemsUseThePool) {
  AttentionCase c = small_case(DType::kF32, 128, 8, 8, Mask::causal());
  c.d = c.dv = 64;
  EXPECT_FALSE(runs_inline(c, 2));
  EXPECT_FALSE(runs_inline(small_case(DType::kF32, 16, 2, 2, Mask::none()), 1));  // no pool to skip
}

// The tile loop's prefetches (FlashParams::prefetch) are off where q, k, v
// and out together fit a quarter of L2 (issue 37's B=1, H=8, S=16, D=64 is
// 128 KiB in f32), on from there up; a prefetch never changes a result, so
// both sides are the conformance suite's too.
TEST(CpuFlashSmall, PrefetchesOnlyWhereTheTensorsOutgrowACacheShare) {
  const auto prefetches = [](int64_t s, DType dtype) {
    AttentionCase c = small_case(dtype, s, 8, 8, Mask::causal());
    c.d = c.dv = 64;
    const OwnedCase tensors(c);
    EXPECT_TRUE(tensors.status().ok()) << tensors.status().message();
    cpu_flash::FlashParams p;
    cpu_flash::make_params(tensors.args, 1, &p);
    return p.prefetch;
  };
  EXPECT_FALSE(prefetches(16, DType::kF32));   // 128 KiB
  EXPECT_FALSE(prefetches(16, DType::kBF16));  // 64 KiB
  EXPECT_TRUE(prefetches(64, DType::kF32));    // 512 KiB
  EXPECT_TRUE(prefetches(128, DType::kBF16));  // 512 KiB
}

}  // namespace
}  // namespace tessera::flash_test
