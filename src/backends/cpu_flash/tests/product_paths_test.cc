// cpu.flash's product paths: the shipped table (every CPU kind has a row,
// each row's default is the fastest path its own figures record), the
// fallback order, and on this machine the path plain cpu.flash takes. Judged
// on the table's recorded figures, never on timings taken here.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <set>

#include "cpu_flash/flash_forward.h"
#include "cpu_flash/product_paths.h"
#include "flash_test_util.h"
#include "hwy/targets.h"

namespace tessera::cpu_flash {
// Failures print "bf16dot", not a byte (found by GoogleTest through ADL).
void PrintTo(Products path, std::ostream* os) { *os << path_name(path); }
}  // namespace tessera::cpu_flash

namespace tessera::flash_test {
namespace {

using cpu_flash::Products;
using cpu_flash::ProductPathRow;

// The shape every row's figures were measured on: S2, bf16, D = 64.
constexpr DType kS2Dtype = DType::kBF16;
constexpr int64_t kS2HeadDim = 64;

double figure(const ProductPathRow& row, Products path) {
  return row.s2_bf16_gflops[static_cast<size_t>(path)];
}

bool every_path_runs(Products /*path*/) { return true; }

std::vector<CpuKind> every_cpu_kind() {
  std::vector<CpuKind> kinds;
  for (int k = static_cast<int>(CpuKind::kGeneric); k <= static_cast<int>(CpuKind::kAmx); ++k) {
    kinds.push_back(static_cast<CpuKind>(k));
  }
  return kinds;
}

TEST(ProductPathTable, HasOneRowPerCpuKind) {
  const auto table = cpu_flash::product_path_table();
  for (CpuKind kind : every_cpu_kind()) {
    EXPECT_EQ(std::count_if(table.begin(), table.end(),
                            [&](const ProductPathRow& r) { return r.kind == kind; }),
              1)
        << cpu_kind_name(kind);
    EXPECT_EQ(cpu_flash::product_path_row(kind).kind, kind) << cpu_kind_name(kind);
  }
  EXPECT_EQ(table.size(), every_cpu_kind().size());
  // product_path_row's answer for a kind without a row.
  EXPECT_EQ(table.front().kind, CpuKind::kGeneric);
}

// The default for the measured shape is the argmax of the row's figures over
// the paths that apply to it, and the whole order is the figures' order, so
// a fallback takes the next fastest measured path.
TEST(ProductPathTable, EachRowsDefaultIsItsFastestMeasuredPath) {
  for (const ProductPathRow& row : cpu_flash::product_path_table()) {
    SCOPED_TRACE(std::string(cpu_kind_name(row.kind)));
    ASSERT_GE(row.paths, 1);
    ASSERT_LE(row.paths, static_cast<int>(row.order.size()));
    const auto listed = std::span(row.order).first(static_cast<size_t>(row.paths));
    EXPECT_EQ(std::set<Products>(listed.begin(), listed.end()).size(), listed.size())
        << "a path listed twice";
    EXPECT_NE(std::find(listed.begin(), listed.end(), Products::kF32), listed.end())
        << "f32 applies to everything: every order ends in it at the latest";
    EXPECT_FALSE(row.note.empty());

    Products best = Products::kF32;
    double best_figure = -1;
    for (Products path : cpu_flash::kAllPaths) {
      const bool in_order = std::find(listed.begin(), listed.end(), path) != listed.end();
      if (!in_order) {
        EXPECT_EQ(figure(row, path), 0) << cpu_flash::path_name(path) << " measured but not listed";
      }
      if (in_order && cpu_flash::path_applies(path, kS2Dtype, kS2HeadDim) &&
          figure(row, path) > best_figure) {
        best = path;
        best_figure = figure(row, path);
      }
    }
    EXPECT_EQ(cpu_flash::path_from_row(row, kS2Dtype, kS2HeadDim, every_path_runs), best)
        << "the default is not the fastest path the row records";

    if (row.paths == 1) {
      // Nothing to choose: a kind without the bf16 instructions.
      EXPECT_TRUE(row.kind == CpuKind::kGeneric || row.kind == CpuKind::kAvx2 ||
                  row.kind == CpuKind::kAvx512)
          << "a kind with AVX512_BF16 needs measured figures for its bf16 paths";
      continue;
    }
    EXPECT_FALSE(row.machine.empty());
    EXPECT_FALSE(row.measured.empty());
    EXPECT_FALSE(row.source.empty());
    for (size_t i = 0; i < listed.size(); ++i) {
      EXPECT_GT(figure(row, listed[i]), 0) << cpu_flash::path_name(listed[i]) << " not measured";
      if (i > 0) {
        EXPECT_LT(figure(row, listed[i]), figure(row, listed[i - 1]))
            << cpu_flash::path_name(listed[i]) << " listed after a slower path";
      }
    }
  }
}

// Where the first path does not apply or does not run, the next one in the
// recorded order serves.
TEST(ProductPathTable, FallsBackInTheRecordedOrder) {
  const ProductPathRow& amx = cpu_flash::product_path_row(CpuKind::kAmx);
  const ProductPathRow& zen5 = cpu_flash::product_path_row(CpuKind::kAvx512Bf16Amd);
  const auto no_amx = [](Products path) { return path != Products::kAmx; };
  EXPECT_EQ(cpu_flash::path_from_row(amx, DType::kBF16, 64, every_path_runs), Products::kAmx);
  // D % 32 != 0: the Xeon measured the f32 products faster than bf16dot.
  EXPECT_EQ(cpu_flash::path_from_row(amx, DType::kBF16, 48, every_path_runs), Products::kF32);
  // The OS refused the tile state.
  EXPECT_EQ(cpu_flash::path_from_row(amx, DType::kBF16, 64, no_amx), Products::kF32);
  EXPECT_EQ(cpu_flash::path_from_row(zen5, DType::kBF16, 48, every_path_runs),
            Products::kBf16Dot);
  EXPECT_EQ(cpu_flash::path_from_row(zen5, DType::kBF16, 59, every_path_runs), Products::kF32);
  // f32 and f16 inputs take the f32 products on every kind.
  for (const ProductPathRow& row : cpu_flash::product_path_table()) {
    for (DType dtype : {DType::kF32, DType::kF16}) {
      EXPECT_EQ(cpu_flash::path_from_row(row, dtype, 64, every_path_runs), Products::kF32)
          << cpu_kind_name(row.kind);
    }
  }
}

TEST(ProductPaths, RefusalsNameTheValue) {
  EXPECT_EQ(cpu_flash::path_refusal(Products::kF32, DType::kF16, 59), "");
  EXPECT_NE(cpu_flash::path_refusal(Products::kBf16Dot, DType::kF32, 64).find("dtype f32"),
            std::string::npos);
  EXPECT_NE(cpu_flash::path_refusal(Products::kBf16Dot, DType::kBF16, 59).find("D = 59"),
            std::string::npos);
  EXPECT_EQ(cpu_flash::path_refusal(Products::kBf16Dot, DType::kBF16, 48), "");
  EXPECT_NE(cpu_flash::path_refusal(Products::kAmx, DType::kBF16, 48).find("D = 48"),
            std::string::npos);
  EXPECT_NE(cpu_flash::path_refusal(Products::kAmx, DType::kF16, 64).find("dtype f16"),
            std::string::npos);
  for (Products path : cpu_flash::kAllPaths) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (int64_t d : {16, 48, 59, 64}) {
        EXPECT_EQ(cpu_flash::path_applies(path, dtype, d),
                  cpu_flash::path_refusal(path, dtype, d).empty());
      }
    }
  }
}

// What runs here follows the CPU, the OS and the SIMD target the kernel
// dispatches to; an unavailable path says why.
TEST(ProductPaths, AvailabilityFollowsTheCpuAndTheTarget) {
  EXPECT_TRUE(cpu_flash::path_available(Products::kF32));
  EXPECT_EQ(cpu_flash::path_unavailable_reason(Products::kF32), "");
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    const bool avx512 = target == HWY_AVX3 || target == HWY_AVX3_DL;
    SCOPED_TRACE(hwy::TargetName(target));
    EXPECT_TRUE(cpu_flash::target_has_path(Products::kF32));
    EXPECT_EQ(cpu_flash::target_has_path(Products::kBf16Dot), avx512);
    EXPECT_EQ(cpu_flash::target_has_path(Products::kAmx), avx512);
    EXPECT_EQ(cpu_flash::path_available(Products::kBf16Dot),
              cpu_flash::cpu_has_bf16_dot() && avx512);
    EXPECT_EQ(cpu_flash::path_available(Products::kAmx), cpu_flash::cpu_has_amx() && avx512);
    for (Products path : {Products::kBf16Dot, Products::kAmx}) {
      const std::string why = cpu_flash::path_unavailable_reason(path);
      EXPECT_EQ(why.empty(), cpu_flash::path_available(path)) << why;
      // The CPU's own lack is named first (a Zen 4 or 5 has the bf16 dot
      // product but no AMX: the AMX path's reason is the tiles, on any target).
      const bool cpu_has = path == Products::kAmx ? cpu_flash::cpu_has_amx()
                                                  : cpu_flash::cpu_has_bf16_dot();
      if (!cpu_has) {
        EXPECT_NE(why.find(path == Products::kAmx ? "AMX" : "AVX512_BF16"), std::string::npos)
            << why;
      } else if (!avx512) {
        EXPECT_NE(why.find(cpu_flash::flash_target_name()), std::string::npos) << why;
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// On this machine, plain cpu.flash takes the path its kind's row gives,
// among the paths available here, and make_params (what run() plans with)
// agrees.
TEST(ProductPaths, PlainCpuFlashTakesTheTablesPathForThisCpu) {
  const ProductPathRow& row = cpu_flash::product_path_row(cpu_kind());
  ::testing::Test::RecordProperty("cpu_kind", std::string(cpu_kind_name(cpu_kind())));
  for (DType dtype : {DType::kBF16, DType::kF32, DType::kF16}) {
    for (int64_t d : {64, 48, 59}) {
      const Products expected = cpu_flash::path_from_row(
          row, dtype, d, [](Products path) { return cpu_flash::path_available(path); });
      EXPECT_EQ(cpu_flash::product_path_for(dtype, d), expected) << dtype_name(dtype) << " " << d;
      AttentionCase c;
      c.dtype = dtype;
      c.sq = c.sk = 64;
      c.d = c.dv = d;
      const OwnedCase tensors(c);
      EXPECT_EQ(cpu_flash::product_path_for(tensors.args), expected);
      cpu_flash::FlashParams p;
      cpu_flash::make_params(tensors.args, 2, &p);
      EXPECT_EQ(p.products, expected) << dtype_name(dtype) << " " << d;
    }
  }
}

// A forced path serves when it applies and runs here; otherwise make_params
// keeps the default, so the kernel never reads past D's pairs or tiles nor
// runs an instruction this CPU lacks.
TEST(ProductPaths, ForcedPathOnlyWhereItAppliesAndRuns) {
  for (Products path : cpu_flash::kAllPaths) {
    for (DType dtype : {DType::kBF16, DType::kF32}) {
      for (int64_t d : {64, 48, 59}) {
        AttentionCase c;
        c.dtype = dtype;
        c.sq = c.sk = 8;
        c.d = c.dv = d;
        const OwnedCase tensors(c);
        cpu_flash::FlashParams p;
        cpu_flash::make_params(tensors.args, 2, &p, path);
        const bool serves = cpu_flash::path_applies(path, dtype, d) && cpu_flash::path_available(path);
        EXPECT_EQ(p.products, serves ? path : cpu_flash::product_path_for(dtype, d))
            << cpu_flash::path_name(path) << " " << dtype_name(dtype) << " D=" << d;
      }
    }
  }
}

}  // namespace
}  // namespace tessera::flash_test
