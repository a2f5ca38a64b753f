// The case grid covers every axis value and feature, names are unique valid
// gtest names, and every case materializes into valid args.
#include "verify/grid.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "tessera/context.h"

namespace tessera::verify {
namespace {

bool is_gtest_name(const std::string& s) {
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return !s.empty();
}

TEST(Grid, NamesAreUniqueAndValidTestNames) {
  for (const auto& grid : {full_grid(), quick_grid()}) {
    std::set<std::string> names;
    for (const AttentionCase& c : grid) {
      EXPECT_TRUE(is_gtest_name(c.name())) << c.name();
      EXPECT_TRUE(names.insert(c.name()).second) << "duplicate " << c.name();
    }
  }
  std::set<std::string> invalid;
  for (const InvalidCase& c : invalid_cases()) {
    EXPECT_TRUE(is_gtest_name(c.name)) << c.name;
    EXPECT_TRUE(invalid.insert(c.name).second) << "duplicate " << c.name;
  }
}

TEST(Grid, NameSpellsTheCase) {
  AttentionCase c;
  c.batch = 3;
  c.sq = 113;
  c.sk = 129;
  c.hq = 4;
  c.hkv = 2;
  c.d = c.dv = 59;
  c.dtype = DType::kBF16;
  c.mask = Mask::window(-1, 0);
  c.bias = BiasKind::kFull;
  c.lse = true;
  c.layout = Layout::kBHSD;
  EXPECT_EQ(c.name(), "B3_Sq113_Sk129_Hq4_Hkv2_D59_bf16_wininf_0_biasfull_lse_bhsd");
  c.set_varlen({7, 0}, {5, 9});
  EXPECT_EQ(c.batch, 2);
  EXPECT_EQ(c.sq, 7);
  EXPECT_EQ(c.sk, 9);
  EXPECT_EQ(c.name().rfind("varlen_q7x0_k5x9_Hq4", 0), 0u) << c.name();
}

// Features a case can exercise, each with a predicate.
const std::map<std::string, std::function<bool(const AttentionCase&)>>& features() {
  static const std::map<std::string, std::function<bool(const AttentionCase&)>> f = {
      {"mha", [](const AttentionCase& c) { return c.hq == c.hkv; }},
      {"gqa", [](const AttentionCase& c) { return c.hq > c.hkv && c.hkv > 1; }},
      {"mqa", [](const AttentionCase& c) { return c.hq > 1 && c.hkv == 1; }},
      {"no mask", [](const AttentionCase& c) { return c.mask.kind == MaskKind::kNone; }},
      {"causal Sq<Sk",
       [](const AttentionCase& c) { return c.mask.kind == MaskKind::kCausal && c.sq < c.sk; }},
      {"causal Sq>Sk",
       [](const AttentionCase& c) { return c.mask.kind == MaskKind::kCausal && c.sq > c.sk; }},
      {"window", [](const AttentionCase& c) { return c.mask.kind == MaskKind::kWindow; }},
      {"bias full", [](const AttentionCase& c) { return c.bias == BiasKind::kFull; }},
      {"bias broadcast", [](const AttentionCase& c) { return c.bias == BiasKind::kBroadcast; }},
      {"varlen", [](const AttentionCase& c) { return c.varlen(); }},
      {"softcap", [](const AttentionCase& c) { return c.softcap > 0; }},
      {"scale", [](const AttentionCase& c) { return c.scale.has_value(); }},
      {"lse", [](const AttentionCase& c) { return c.lse; }},
      {"bshd padded", [](const AttentionCase& c) { return c.layout == Layout::kBSHDPadded; }},
      {"bhsd", [](const AttentionCase& c) { return c.layout == Layout::kBHSD; }},
      {"nan rows", [](const AttentionCase& c) { return c.nan_rows > 0; }},
      {"dv != d", [](const AttentionCase& c) { return c.dv != c.d; }},
  };
  return f;
}

TEST(Grid, EveryAxisValueAppears) {
  std::set<int64_t> sq, sk, d, b;
  std::set<DType> dtypes;
  for (const AttentionCase& c : full_grid()) {
    sq.insert(c.sq);
    sk.insert(c.sk);
    d.insert(c.d);
    b.insert(c.batch);
    dtypes.insert(c.dtype);
  }
  for (int64_t s : kSeqLens) {
    EXPECT_TRUE(sq.count(s)) << "Sq " << s;
    EXPECT_TRUE(sk.count(s)) << "Sk " << s;
  }
  for (int64_t x : kHeadDims) EXPECT_TRUE(d.count(x)) << "D " << x;
  for (int64_t x : kBatches) EXPECT_TRUE(b.count(x)) << "B " << x;
  for (DType t : kDTypes) EXPECT_TRUE(dtypes.count(t)) << dtype_name(t);
}

// Each feature meets at least three shapes and every dtype in the full grid,
// and appears in the quick grid.
TEST(Grid, EveryFeatureIsCrossedWithSizesAndDtypes) {
  for (const auto& [name, has] : features()) {
    std::set<std::tuple<int64_t, int64_t, int64_t>> shapes;
    std::set<DType> dtypes;
    for (const AttentionCase& c : full_grid()) {
      if (!has(c)) continue;
      shapes.insert({c.sq, c.sk, c.d});
      dtypes.insert(c.dtype);
    }
    EXPECT_GE(shapes.size(), 3u) << name;
    EXPECT_EQ(dtypes.size(), std::size(kDTypes)) << name;
    bool quick = false;
    for (const AttentionCase& c : quick_grid()) quick = quick || has(c);
    EXPECT_TRUE(quick) << name << " missing from the quick grid";
  }
}

TEST(Grid, QuickCasesAndInvalidBasesMaterializeValidArgs) {
  Context ctx;
  std::vector<AttentionCase> cases = quick_grid();
  for (const InvalidCase& c : invalid_cases()) cases.push_back(c.base);
  for (const AttentionCase& c : cases) {
    MaterializedCase m;
    ASSERT_TRUE(MaterializedCase::create(c, ctx.allocator(), &m).ok()) << c.name();
    const Status s = validate(m.args());
    EXPECT_TRUE(s.ok()) << c.name() << ": " << s.to_string();
    EXPECT_EQ(m.args().lse.present(), c.lse) << c.name();
    EXPECT_EQ(m.args().bias.present(), c.bias != BiasKind::kNone) << c.name();
    EXPECT_TRUE(m.check_outputs_poisoned().ok()) << c.name();
    EXPECT_TRUE(m.check_inputs_untouched().ok()) << c.name();
  }
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

// Inputs are deterministic: the same case gives the same bits.
TEST(Grid, InputsAreDeterministic) {
  Context ctx;
  const AttentionCase c = quick_grid().at(1);
  MaterializedCase a, b;
  ASSERT_TRUE(MaterializedCase::create(c, ctx.allocator(), &a).ok());
  ASSERT_TRUE(MaterializedCase::create(c, ctx.allocator(), &b).ok());
  std::vector<float> out_a(a.rows() * c.dv), lse_a(a.rows()), out_b(out_a), lse_b(lse_a);
  const AttentionArgs la = a.logical_args(out_a.data(), lse_a.data());
  const AttentionArgs lb = b.logical_args(out_b.data(), lse_b.data());
  const size_t bytes = static_cast<size_t>(la.q.numel()) * sizeof(float);
  EXPECT_EQ(std::memcmp(la.q.data, lb.q.data, bytes), 0);
}

}  // namespace
}  // namespace tessera::verify
