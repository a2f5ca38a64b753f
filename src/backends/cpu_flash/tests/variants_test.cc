// cpu.flash's variants (cpu.flash:f32 / :bf16dot / :amx): registered with
// the built-in backends, unavailable with a reason where the CPU lacks the
// path, refusing what the path does not apply to, matching the reference
// where they run, chosen by name but never by plain `auto`, and the path
// that served named in the dispatch span.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cpu_flash/cpu_flash_backend.h"
#include "cpu_flash/product_paths.h"
#include "flash_test_util.h"
#include "runtime/trace_export.h"
#include "tessera/dispatcher.h"

namespace tessera::flash_test {
namespace {

using cpu_flash::Products;

std::string variant_name(Products path) {
  return "cpu.flash:" + std::string(cpu_flash::path_name(path));
}

const Registry& builtin() {
  static Registry registry;
  static const bool once = (register_builtin_backends(registry), true);
  (void)once;
  return registry;
}

AttentionCase bf16_case(int64_t d) {
  AttentionCase c;
  c.dtype = DType::kBF16;
  c.sq = 113;
  c.sk = 129;
  c.hq = 4;
  c.hkv = 2;
  c.d = c.dv = d;
  c.mask = Mask::causal();
  c.lse = true;
  return c;
}

TEST(CpuFlashVariants, RegisteredRightAfterCpuFlashBelowEveryOtherCpuBackend) {
  const std::vector<Backend*> all = builtin().backends();
  const auto at = [&](std::string_view name) {
    return std::find_if(all.begin(), all.end(), [&](Backend* b) { return b->name() == name; }) -
           all.begin();
  };
  const auto plain = at("cpu.flash");
  ASSERT_LT(plain, static_cast<ptrdiff_t>(all.size()));
  for (size_t i = 0; i < cpu_flash::kAllPaths.size(); ++i) {
    const Products path = cpu_flash::kAllPaths[i];
    SCOPED_TRACE(variant_name(path));
    ASSERT_EQ(at(variant_name(path)), plain + 1 + static_cast<ptrdiff_t>(i));
    const Backend& v = *builtin().find(variant_name(path));
    // Below reference too: plain `auto` never falls back into a variant.
    for (const Backend* other : all) {
      if (other->device() == v.device() && other->name().find(':') == std::string_view::npos) {
        EXPECT_LT(v.priority(), other->priority()) << other->name();
      }
    }
    const Availability av = v.availability();
    EXPECT_EQ(av.available, cpu_flash::path_available(path));
    EXPECT_EQ(av.reason, cpu_flash::path_unavailable_reason(path));
    if (!av.available) {
      EXPECT_FALSE(av.reason.empty());
      std::cerr << variant_name(path) << " unavailable here: " << av.reason << "\n";
    }
  }
}

// check() refuses, naming the value, what the path does not apply to; an
// unavailable variant refuses everything, saying why, even when called
// directly.
TEST(CpuFlashVariants, CheckRefusesWhatThePathDoesNotApplyTo) {
  const Context ctx;
  const auto reasons_for = [&](Products path, const AttentionCase& c) {
    const OwnedCase tensors(c);
    return check_args(*builtin().find(variant_name(path)), tensors.args, ctx);
  };
  AttentionCase f32 = bf16_case(64);
  f32.dtype = DType::kF32;
  AttentionCase f16 = bf16_case(59);
  f16.dtype = DType::kF16;
  for (Products path : {Products::kBf16Dot, Products::kAmx}) {
    SCOPED_TRACE(variant_name(path));
    EXPECT_TRUE(mentions(reasons_for(path, f32), "dtype f32")) << "f32 inputs";
    EXPECT_TRUE(mentions(reasons_for(path, f16), "dtype f16")) << "f16 inputs";
    const bool runs = cpu_flash::path_available(path);
    const std::vector<std::string> fits = reasons_for(path, bf16_case(64));
    EXPECT_EQ(fits.empty(), runs);
    if (!runs) {
      EXPECT_TRUE(mentions(fits, "unavailable: " + cpu_flash::path_unavailable_reason(path)));
    }
  }
  EXPECT_TRUE(mentions(reasons_for(Products::kBf16Dot, bf16_case(59)), "D = 59 is odd"));
  EXPECT_FALSE(mentions(reasons_for(Products::kBf16Dot, bf16_case(48)), "D = 48"));
  EXPECT_TRUE(
      mentions(reasons_for(Products::kAmx, bf16_case(48)), "D = 48 is not a multiple of 32"));
  // cpu.flash:f32 runs every problem cpu.flash runs.
  for (const AttentionCase& c : {f32, f16, bf16_case(59), bf16_case(48)}) {
    EXPECT_EQ(reasons_for(Products::kF32, c), std::vector<std::string>{}) << c.name();
  }
}

// Each variant that runs here matches the reference on every Highway target
// that has its path; the kernels of the others are exercised on a CPU that
// has them (this test says which it could not run).
TEST(CpuFlashVariants, EachAvailableVariantMatchesTheReference) {
  AttentionCase tiled = bf16_case(96);  // D % 32 == 0, Dv not: amx pads
  tiled.dv = 24;
  tiled.softcap = 5.0f;
  tiled.bias = BiasKind::kKeyStride0;
  AttentionCase decode = bf16_case(64);
  decode.sq = 1;
  decode.sk = 1000;
  decode.mask = Mask::none();
  AttentionCase f32 = bf16_case(59);
  f32.dtype = DType::kF32;
  std::string not_run;
  for (Products path : cpu_flash::kAllPaths) {
    Backend& v = *builtin().find(variant_name(path));
    if (!v.availability().available) {
      not_run += " " + variant_name(path) + " (" + v.availability().reason + ")";
      continue;
    }
    for (const AttentionCase& c : {bf16_case(64), tiled, decode, f32}) {
      if (!cpu_flash::path_applies(path, c.dtype, c.d)) continue;
      const std::string failures = compare_on_all_targets(v, c);
      EXPECT_TRUE(failures.empty()) << v.name() << " " << c.name() << "\n" << failures;
    }
  }
  if (!not_run.empty()) std::cerr << "not run, unavailable here:" << not_run << "\n";
}

Status dispatch(const std::string& policy_text, const AttentionCase& c, Context& ctx,
                std::string* used) {
  Policy policy;
  TESSERA_RETURN_IF_ERROR(parse_policy(policy_text, &policy));
  Dispatcher dispatcher(builtin(), policy);
  OwnedCase tensors(c);
  return dispatcher.run(tensors.args, ctx, used);
}

TEST(CpuFlashVariants, ChosenByNameNeverByPlainAuto) {
  Context ctx;
  std::string used;
  ASSERT_TRUE(dispatch("only:cpu.flash:f32", bf16_case(64), ctx, &used).ok());
  EXPECT_EQ(used, "cpu.flash:f32");
  ASSERT_TRUE(dispatch("prefer:cpu.flash:f32", bf16_case(64), ctx, &used).ok());
  EXPECT_EQ(used, "cpu.flash:f32");
  ASSERT_TRUE(dispatch("auto", bf16_case(64), ctx, &used).ok());
  EXPECT_EQ(used, "cpu.flash");
  // With cpu.flash denied, auto goes to another backend, never to a variant.
  ASSERT_TRUE(dispatch("deny:cpu.flash", bf16_case(64), ctx, &used).ok());
  EXPECT_EQ(used.find("cpu.flash"), std::string::npos) << used;
  for (Products path : {Products::kBf16Dot, Products::kAmx}) {
    const Status s = dispatch("only:" + variant_name(path), bf16_case(64), ctx, &used);
    if (cpu_flash::path_available(path)) {
      EXPECT_TRUE(s.ok()) << s.to_string();
      EXPECT_EQ(used, variant_name(path));
    } else {
      EXPECT_EQ(s.code(), StatusCode::kUnsupported);
      EXPECT_NE(s.message().find("unavailable: " + cpu_flash::path_unavailable_reason(path)),
                std::string::npos)
          << s.message();
    }
  }
}

// The dispatch span (and its Chrome trace event) names the product path
// that served: plain cpu.flash's from the table, a variant's own.
TEST(CpuFlashVariants, DispatchSpanNamesThePath) {
  for (const std::string policy : {"auto", "only:cpu.flash:f32"}) {
    Context ctx;
    std::string used;
    ASSERT_TRUE(dispatch(policy, bf16_case(64), ctx, &used).ok()) << policy;
    const std::vector<Span> spans = ctx.profiler().spans();
    ASSERT_EQ(spans.size(), 1u) << policy;
    const std::string expected(cpu_flash::path_name(
        policy == "auto" ? cpu_flash::product_path_for(OwnedCase(bf16_case(64)).args)
                         : Products::kF32));
    EXPECT_EQ(spans[0].backend, used);
    EXPECT_EQ(spans[0].path, expected) << policy;
    const nlohmann::json trace = nlohmann::json::parse(chrome_trace_json(spans));
    bool found = false;
    for (const auto& e : trace.at("traceEvents")) {
      if (e.value("ph", "") == "X") {
        EXPECT_EQ(e.at("args").value("path", ""), expected) << policy;
        found = true;
      }
    }
    EXPECT_TRUE(found) << policy;
  }
}

}  // namespace
}  // namespace tessera::flash_test
