// cpu.flash's product paths: the shipped table (every CPU kind has a row,
// each row's default is the fastest path its own figures record), the
// fallback order, and on this machine the path plain cpu.flash takes. Judged
// on the table's recorded figures, never on timings taken here.
#include "cpu_flash/product_paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <set>

#include "cpu_flash/flash_forward.h"
#include "flash_test_util.h"
#include "hwy/targets.h"

namespace tessera::cpu_flash {
// Failures print "bf16dot", not a byte (found by GoogleTest through ADL).
void PrintTo(Products path, std::ostream* os) { *os << path_name(path); }
}  // namespace tessera::cpu_flash

namespace tessera::flash_test {
namespace {

using cpu_flash::ProductPathRow;
using cpu_flash::Products;

using cpu_flash::PathRanking;
using cpu_flash::ProblemForm;

// The shapes the rows' figures were measured on: S2 (tiles) and S4
// (decode), both bf16; their head dims.
constexpr DType kMeasuredDtype = DType::kBF16;
constexpr int64_t measured_head_dim(ProblemForm form) {
  return form == ProblemForm::kDecode ? 128 : 64;
}

double figure(const PathRanking& ranking, Products path) {
  return ranking.figures[static_cast<size_t>(path)];
}

bool measured(const PathRanking& ranking) {
  return std::any_of(ranking.figures.begin(), ranking.figures.end(),
                     [](double f) { return f > 0; });
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

// The default for the measured shape is the argmax of the ranking's figures
// over the paths that apply to it, and the whole order is the figures'
// order, so a fallback takes the next fastest measured path. Per form: the
// tile loop's ranking (S2) and decode's (S4); a decode ranking without
// figures (not measured apart) repeats the tiles' order.
void expect_ranked_by_its_figures(const ProductPathRow& row, ProblemForm form) {
  const PathRanking& ranking = row.ranking(form);
  SCOPED_TRACE(std::string(cpu_kind_name(row.kind)) +
               (form == ProblemForm::kDecode ? " decode" : " tiles"));
  ASSERT_GE(ranking.paths, 1);
  ASSERT_LE(ranking.paths, static_cast<int>(ranking.order.size()));
  const auto listed = std::span(ranking.order).first(static_cast<size_t>(ranking.paths));
  EXPECT_EQ(std::set<Products>(listed.begin(), listed.end()).size(), listed.size())
      << "a path listed twice";
  EXPECT_NE(std::find(listed.begin(), listed.end(), Products::kF32), listed.end())
      << "f32 applies to everything: every order ends in it at the latest";
  EXPECT_FALSE(row.note.empty());
  if (form == ProblemForm::kDecode && !measured(ranking)) {
    const auto tiles = std::span(row.tiles.order).first(static_cast<size_t>(row.tiles.paths));
    EXPECT_TRUE(std::equal(listed.begin(), listed.end(), tiles.begin(), tiles.end()))
        << "decode not measured apart, yet ordered unlike the tiles";
    return;
  }

  const int64_t d = measured_head_dim(form);
  Products best = Products::kF32;
  double best_figure = -1;
  for (Products path : cpu_flash::kAllPaths) {
    const bool in_order = std::find(listed.begin(), listed.end(), path) != listed.end();
    if (!in_order) {
      EXPECT_EQ(figure(ranking, path), 0)
          << cpu_flash::path_name(path) << " measured but not listed";
    }
    if (in_order && cpu_flash::path_applies(path, kMeasuredDtype, d) &&
        figure(ranking, path) > best_figure) {
      best = path;
      best_figure = figure(ranking, path);
    }
  }
  EXPECT_EQ(cpu_flash::path_from_ranking(ranking, kMeasuredDtype, d, every_path_runs), best)
      << "the default is not the fastest path the row records";

  if (ranking.paths == 1) {
    // Nothing to choose: a kind without the bf16 instructions.
    EXPECT_TRUE(row.kind == CpuKind::kGeneric || row.kind == CpuKind::kAvx2 ||
                row.kind == CpuKind::kAvx512)
        << "a kind with AVX512_BF16 needs measured figures for its bf16 paths";
    return;
  }
  EXPECT_FALSE(row.machine.empty());
  EXPECT_FALSE(row.measured.empty());
  EXPECT_FALSE(row.source.empty());
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_GT(figure(ranking, listed[i]), 0) << cpu_flash::path_name(listed[i]) << " not measured";
    if (i > 0) {
      EXPECT_LT(figure(ranking, listed[i]), figure(ranking, listed[i - 1]))
          << cpu_flash::path_name(listed[i]) << " listed after a slower path";
    }
  }
}

TEST(ProductPathTable, EachRowsDefaultIsItsFastestMeasuredPath) {
  for (const ProductPathRow& row : cpu_flash::product_path_table()) {
    expect_ranked_by_its_figures(row, ProblemForm::kTiles);
    expect_ranked_by_its_figures(row, ProblemForm::kDecode);
  }
}

// Where the first path does not apply or does not run, the next one in the
// recorded order serves.
TEST(ProductPathTable, FallsBackInTheRecordedOrder) {
  const ProductPathRow& amx = cpu_flash::product_path_row(CpuKind::kAmx);
  const ProductPathRow& zen5 = cpu_flash::product_path_row(CpuKind::kAvx512Bf16Amd);
  const auto no_amx = [](Products path) { return path != Products::kAmx; };
  EXPECT_EQ(cpu_flash::path_from_ranking(amx.tiles, DType::kBF16, 64, every_path_runs),
            Products::kAmx);
  // D % 32 != 0: the Xeon measured the f32 products faster than bf16dot.
  EXPECT_EQ(cpu_flash::path_from_ranking(amx.tiles, DType::kBF16, 48, every_path_runs),
            Products::kF32);
  // The OS refused the tile state.
  EXPECT_EQ(cpu_flash::path_from_ranking(amx.tiles, DType::kBF16, 64, no_amx), Products::kF32);
  EXPECT_EQ(cpu_flash::path_from_ranking(zen5.tiles, DType::kBF16, 48, every_path_runs),
            Products::kBf16Dot);
  EXPECT_EQ(cpu_flash::path_from_ranking(zen5.tiles, DType::kBF16, 59, every_path_runs),
            Products::kF32);
  // Decode on a Zen: bf16dot's decode loop; odd D, which bf16dot cannot
  // take, the f32 products'.
  EXPECT_EQ(cpu_flash::path_from_ranking(zen5.decode, DType::kBF16, 128, every_path_runs),
            Products::kBf16Dot);
  EXPECT_EQ(cpu_flash::path_from_ranking(zen5.decode, DType::kBF16, 59, every_path_runs),
            Products::kF32);
  // f32 and f16 inputs take the f32 products on every kind, in both forms.
  for (const ProductPathRow& row : cpu_flash::product_path_table()) {
    for (DType dtype : {DType::kF32, DType::kF16}) {
      for (ProblemForm form : {ProblemForm::kTiles, ProblemForm::kDecode}) {
        EXPECT_EQ(cpu_flash::path_from_ranking(row.ranking(form), dtype, 64, every_path_runs),
                  Products::kF32)
            << cpu_kind_name(row.kind);
      }
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
      const bool cpu_has =
          path == Products::kAmx ? cpu_flash::cpu_has_amx() : cpu_flash::cpu_has_bf16_dot();
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

// On this machine, plain cpu.flash takes the path its kind's row gives for
// the problem's form, among the paths available here, and make_params (what
// run() plans with) agrees. Decode is one query per sequence that the decode
// loop can serve; with a bias it cannot, and the tiles' ranking applies.
TEST(ProductPaths, PlainCpuFlashTakesTheTablesPathForThisCpu) {
  const ProductPathRow& row = cpu_flash::product_path_row(cpu_kind());
  ::testing::Test::RecordProperty("cpu_kind", std::string(cpu_kind_name(cpu_kind())));
  struct Form {
    int64_t sq;
    BiasKind bias;
    ProblemForm form;
  };
  for (const Form f : {Form{64, BiasKind::kNone, ProblemForm::kTiles},
                       Form{1, BiasKind::kNone, ProblemForm::kDecode},
                       Form{1, BiasKind::kFull, ProblemForm::kTiles}}) {
    for (DType dtype : {DType::kBF16, DType::kF32, DType::kF16}) {
      for (int64_t d : {64, 48, 59, 128}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " D=" + std::to_string(d) +
                     " Sq=" + std::to_string(f.sq));
        const Products expected = cpu_flash::path_from_ranking(
            row.ranking(f.form), dtype, d,
            [](Products path) { return cpu_flash::path_available(path); });
        EXPECT_EQ(cpu_flash::product_path_for(dtype, d, f.form), expected);
        AttentionCase c;
        c.dtype = dtype;
        c.sq = f.sq;
        c.sk = 64;
        c.hq = 4;
        c.hkv = 2;
        c.d = c.dv = d;
        c.bias = f.bias;
        const OwnedCase tensors(c);
        ASSERT_TRUE(tensors.status().ok()) << tensors.status().message();
        EXPECT_EQ(cpu_flash::product_path_for(tensors.args), expected);
        cpu_flash::FlashParams p;
        cpu_flash::make_params(tensors.args, 2, &p);
        EXPECT_EQ(p.products, expected);
        // The decode loop reads f32 and bf16 K/V on the f32 products or
        // bf16dot (f16 and amx take the tile loop).
        EXPECT_EQ(p.decode, f.form == ProblemForm::kDecode && expected != Products::kAmx &&
                                dtype != DType::kF16);
      }
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
        const bool serves =
            cpu_flash::path_applies(path, dtype, d) && cpu_flash::path_available(path);
        EXPECT_EQ(p.products, serves ? path : cpu_flash::product_path_for(tensors.args))
            << cpu_flash::path_name(path) << " " << dtype_name(dtype) << " D=" << d;
      }
    }
  }
}

}  // namespace
}  // namespace tessera::flash_test
