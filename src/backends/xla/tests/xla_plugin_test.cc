// The xla backend on a real PJRT plugin (the discovered one: the CPU plugin
// that scripts/install-deps.sh installs). A missing plugin FAILS these tests
// with the reason: they never pass by skipping.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "reference/reference_backend.h"
#include "tessera/context.h"
#include "verify/grid.h"
#include "verify/runner.h"
#include "xla/attention_plan.h"
#include "xla/xla_backend.h"
#include "xla/xla_flags.h"
#include "xla_test_util.h"
#include "xla/xla_runtime.h"

namespace tessera {
namespace {

using xla_test::contains;
using xla_test::workspace_of;

xla::XlaRuntime& runtime() { return xla::XlaRuntime::for_plugin(""); }

#define ASSERT_PLUGIN()                \
  ASSERT_TRUE(runtime().status().ok()) \
      << "no usable PJRT plugin (run scripts/install-deps.sh): " << runtime().status().to_string()

// A small causal GQA problem over tracked buffers.
struct Problem {
  static constexpr int64_t kB = 2, kS = 48, kHq = 4, kHkv = 2;
  const int64_t kD;
  Buffer q, k, v, out, lse;
  AttentionArgs args;
  // `d` other than the default gives a program signature no other test has.
  explicit Problem(Context& ctx, int64_t d = 32) : kD(d) {
    const size_t qn = kB * kS * kHq * kD, kn = kB * kS * kHkv * kD;
    EXPECT_TRUE(Buffer::allocate(ctx.allocator(), qn * 4, "test", &q).ok());
    EXPECT_TRUE(Buffer::allocate(ctx.allocator(), kn * 4, "test", &k).ok());
    EXPECT_TRUE(Buffer::allocate(ctx.allocator(), kn * 4, "test", &v).ok());
    EXPECT_TRUE(Buffer::allocate(ctx.allocator(), qn * 4, "test", &out).ok());
    EXPECT_TRUE(Buffer::allocate(ctx.allocator(), kB * kHq * kS * 4, "test", &lse).ok());
    for (size_t i = 0; i < qn; ++i) q.as<float>()[i] = std::sin(0.37f * i);
    for (size_t i = 0; i < kn; ++i) k.as<float>()[i] = std::cos(0.11f * i);
    for (size_t i = 0; i < kn; ++i) v.as<float>()[i] = 0.01f * (i % 97);
    args.q = TensorView::contiguous(q.data(), DType::kF32, {kB, kS, kHq, kD});
    args.k = TensorView::contiguous(k.data(), DType::kF32, {kB, kS, kHkv, kD});
    args.v = TensorView::contiguous(v.data(), DType::kF32, {kB, kS, kHkv, kD});
    args.out = TensorView::contiguous(out.data(), DType::kF32, {kB, kS, kHq, kD});
    args.lse = TensorView::contiguous(lse.data(), DType::kF32, {kB, kHq, kS});
    args.mask = Mask::causal();
  }
};

TEST(XlaPlugin, TheDiscoveredPluginLoadsAndHasADevice) {
  ASSERT_PLUGIN();
  EXPECT_EQ(runtime().client().platform(), "cpu") << runtime().describe();
  EXPECT_TRUE(make_xla_backend()->availability().available);
}

TEST(XlaPlugin, PassesTheQuickGrid) {
  ASSERT_PLUGIN();
  auto backend = make_xla_backend();
  auto reference = make_reference_backend();
  for (const verify::AttentionCase& c : verify::quick_grid()) {
    Context ctx;
    const verify::CaseOutcome o = verify::run_case(*backend, *reference, c, ctx);
    EXPECT_EQ(o.verdict, verify::Verdict::kPass) << c.name() << ": " << o.summary();
  }
}

TEST(XlaPlugin, ACompileErrorIsAStatusAndTheProcessLives) {
  ASSERT_PLUGIN();
  std::unique_ptr<xla::PjrtExecutable> exe;
  const Status st = runtime().client().compile("module { func.func @main( {", 1, &exe);
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(contains(st.message(), "PJRT_Client_Compile")) << st.message();
  EXPECT_TRUE(contains(st.message(), "PJRT code")) << st.message();
  EXPECT_EQ(exe, nullptr);
  // Still usable afterwards.
  Context ctx;
  Problem p(ctx);
  EXPECT_TRUE(run_args(*make_xla_backend(), p.args, ctx).ok());
}

TEST(XlaPlugin, TheSecondCallHitsTheExecutableCache) {
  ASSERT_PLUGIN();
  auto backend = make_xla_backend();
  Context ctx;
  Problem p(ctx);
  ASSERT_TRUE(run_args(*backend, p.args, ctx).ok());
  const xla::CacheStats first = runtime().cache_stats();
  ASSERT_TRUE(run_args(*backend, p.args, ctx).ok());
  const xla::CacheStats second = runtime().cache_stats();
  EXPECT_EQ(second.misses, first.misses) << "the second call compiled again";
  EXPECT_EQ(second.hits, first.hits + 1);
}

TEST(XlaPlugin, CompileAndExecuteAreSeparateSpans) {
  ASSERT_PLUGIN();
  auto backend = make_xla_backend();
  Context ctx;
  Problem p(ctx, 24);  // uncached: this run compiles
  p.args.softcap = 3.5f;
  ASSERT_TRUE(run_args(*backend, p.args, ctx).ok());
  int compiles = 0, executes = 0;
  for (const Span& s : ctx.profiler().spans()) {
    compiles += s.name == "xla.compile";
    executes += s.name == "xla.execute";
    if (s.name == "xla.compile" || s.name == "xla.execute") {
      EXPECT_EQ(s.backend, "xla");
      EXPECT_TRUE(contains(s.shape, "softcap=")) << s.shape;
    }
  }
  EXPECT_EQ(compiles, 1);
  EXPECT_EQ(executes, 1);
}

TEST(XlaPlugin, WorkspaceBytesCoverWhatTheCompilerReports) {
  ASSERT_PLUGIN();
  auto backend = make_xla_backend();
  Context ctx;
  Problem p(ctx, 40);
  for (const bool bias : {false, true}) {
    std::vector<float> bias_data(Problem::kB * Problem::kHq * Problem::kS * Problem::kS, 0.25f);
    p.args.bias =
        bias ? TensorView::contiguous(bias_data.data(), DType::kF32,
                                      {Problem::kB, Problem::kHq, Problem::kS, Problem::kS})
             : TensorView{};
    const std::vector<xla::Group> groups = xla::groups_of(p.args);
    ASSERT_EQ(groups.size(), 1u);
    const xla::ProgramKey key = xla::key_for(p.args, groups[0]);
    std::shared_ptr<xla::PjrtExecutable> exe;
    ASSERT_TRUE(runtime().executable(key, ctx, &exe).ok());
    xla::CompiledMemory memory;
    ASSERT_TRUE(runtime().client().compiled_memory(*exe, &memory).ok());
    // Device side: the compiler's arguments, outputs and temporaries; host
    // side: the tracked staging, which the same formula counts once more.
    const size_t device = static_cast<size_t>(memory.total());
    EXPECT_GE(workspace_of(*backend, p.args), device + xla::staging_bytes(key))
        << "bias " << bias << ": compiler says " << memory.arguments << " arguments, "
        << memory.outputs << " outputs, " << memory.temporaries << " temporaries";
  }
}

long resident_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

TEST(XlaPlugin, NoLeakAcrossAThousandCalls) {
  ASSERT_PLUGIN();
  auto backend = make_xla_backend();
  Context ctx;
  {
    Problem p(ctx);
    ASSERT_TRUE(run_args(*backend, p.args, ctx).ok());  // compile outside the measure
    const long before = resident_kib();
    for (int i = 0; i < 1000; ++i) {
      ASSERT_TRUE(run_args(*backend, p.args, ctx).ok()) << "call " << i;
    }
    // Each call stages ~200 KiB (tracked) and as much in PJRT buffers: a
    // leak of either would grow the process by ~200 MiB. Under ASan freed
    // memory sits in its quarantine (256 MiB), so resident size says nothing
    // there; LeakSanitizer checks the same at exit instead.
    if (std::getenv("TESSERA_TEST_SANITIZED") == nullptr) {
      EXPECT_LT(resident_kib() - before, 32 * 1024) << "resident memory grew";
    }
    EXPECT_EQ(ctx.allocator().by_owner().at("xla").live_bytes, 0u);
  }
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

TEST(XlaPlugin, TheMemoryBudgetRefusesWithTheNumbers) {
  ASSERT_PLUGIN();
  auto backend = make_xla_backend();
  ContextOptions options;
  options.memory_budget_bytes = 400000;
  Context ctx(options);
  Problem p(ctx);  // 148 KiB of the budget; the workspace wants ~0.5 MiB
  const std::vector<std::string> reasons = check_args(*backend, p.args, ctx);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_TRUE(contains(reasons[0], "exceeds the memory budget: 400000 bytes")) << reasons[0];
}

TEST(XlaPlugin, KnownXlaFlagsPassUnknownOnesAreRefused) {
  ASSERT_PLUGIN();
  const std::string plugin = runtime().plugin_path();
  EXPECT_TRUE(xla::check_xla_flags("--xla_cpu_enable_fast_math=false", plugin).ok());
  const Status st = xla::check_xla_flags("--xla_no_such_flag_in_tessera_tests=1", plugin);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(st.message(), "--xla_no_such_flag_in_tessera_tests=1")) << st.message();
  EXPECT_TRUE(contains(st.message(), "abort")) << st.message();
}

}  // namespace
}  // namespace tessera
