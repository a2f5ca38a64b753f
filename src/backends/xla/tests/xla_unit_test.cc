// What the xla backend does without any plugin: it is registered and
// unavailable with the reason, never crashes on a file that is not a plugin,
// refuses XLA_FLAGS that would abort the process, and plans memory-bounded
// tiles.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "tessera/context.h"
#include "xla/attention_plan.h"
#include "xla/compile_options.h"
#include "xla/plugin_discovery.h"
#include "xla/xla_backend.h"
#include "xla/xla_flags.h"
#include "xla_test_util.h"

namespace tessera {
namespace {

using xla_test::contains;
using xla_test::workspace_of;

// A library this test process has loaded for sure, that is no PJRT plugin.
std::string loaded_library(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const size_t at = line.find('/');
    if (at != std::string::npos && contains(line, name)) return line.substr(at);
  }
  return "";
}

TEST(XlaUnit, MissingPluginIsUnavailableWithTheReason) {
  auto backend = xla::make_backend_for_plugin("/nonexistent/tessera/libnope.so");
  EXPECT_EQ(backend->name(), "xla");
  const Availability av = backend->availability();
  EXPECT_FALSE(av.available);
  EXPECT_TRUE(contains(av.reason, "/nonexistent/tessera/libnope.so")) << av.reason;
  EXPECT_TRUE(contains(av.reason, "cannot load PJRT plugin")) << av.reason;
}

TEST(XlaUnit, NoPluginAnywhereSaysWhereItLooked) {
  // Discovery with an explicit path that is empty and no environment root
  // that has a plugin: the message names the variable and the package.
  ::setenv("VIRTUAL_ENV", "/nonexistent/venv", 1);
  ::setenv(xla::kPluginEnv, "", 1);
  std::string path;
  const Status st = xla::find_pjrt_plugin(&path);
  ::unsetenv("VIRTUAL_ENV");
  ::unsetenv(xla::kPluginEnv);
  if (st.ok()) {
    // The project's .venv has one (install-deps.sh): discovery found it.
    EXPECT_TRUE(contains(path, "site-packages")) << path;
  } else {
    EXPECT_EQ(st.code(), StatusCode::kNotFound);
    EXPECT_TRUE(contains(st.message(), xla::kPluginEnv)) << st.message();
    EXPECT_TRUE(contains(st.message(), "xla-cpu-pjrt")) << st.message();
  }
}

TEST(XlaUnit, ExplicitPluginPathWins) {
  ::setenv(xla::kPluginEnv, "/some/where/plugin.so", 1);
  std::string path;
  EXPECT_TRUE(xla::find_pjrt_plugin(&path).ok());
  ::unsetenv(xla::kPluginEnv);
  EXPECT_EQ(path, "/some/where/plugin.so");
}

TEST(XlaUnit, ATextFileIsAClearErrorNotACrash) {
  const std::string path = ::testing::TempDir() + "tessera_not_a_plugin.so";
  std::ofstream(path) << "this is not an ELF file\n";
  const Availability av = xla::make_backend_for_plugin(path)->availability();
  std::remove(path.c_str());
  EXPECT_FALSE(av.available);
  EXPECT_TRUE(contains(av.reason, path)) << av.reason;
  // dlopen's own words follow ("invalid ELF header", "file too short").
  EXPECT_TRUE(contains(av.reason, "cannot load PJRT plugin")) << av.reason;
}

TEST(XlaUnit, ALibraryWithoutGetPjrtApiIsAClearError) {
  const std::string libm = loaded_library("libm.so");
  ASSERT_FALSE(libm.empty()) << "libm is not mapped in this process";
  auto backend = xla::make_backend_for_plugin(libm);
  const Availability av = backend->availability();
  EXPECT_FALSE(av.available);
  EXPECT_TRUE(contains(av.reason, "is not a PJRT plugin")) << av.reason;
  EXPECT_TRUE(contains(av.reason, "GetPjrtApi")) << av.reason;
  // run() says the same instead of crashing.
  Context ctx;
  AttentionArgs args;
  float q[16] = {}, out[16] = {};
  args.q = TensorView::contiguous(q, DType::kF32, {1, 1, 1, 16});
  args.k = args.q;
  args.v = args.q;
  args.out = TensorView::contiguous(out, DType::kF32, {1, 1, 1, 16});
  const Status st = run_args(*backend, args, ctx);
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(contains(st.message(), "GetPjrtApi")) << st.message();
}

TEST(XlaUnit, MalformedXlaFlagsAreRefusedBeforeLoading) {
  // The form is checked before the plugin file is read.
  const Status st = xla::check_xla_flags("--xla_cpu_enable_fast_math=false oops", "/nonexistent");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(st.message(), "'oops'")) << st.message();
  EXPECT_TRUE(xla::check_xla_flags("  ", "/nonexistent").ok());
}

TEST(XlaUnit, CompileOptionsAreCompleteForOneDevice) {
  // executable_build_options (field 3) { device_ordinal -1, num_replicas 1,
  // num_partitions 1 }: the bytes protoc would write for that message.
  const std::string expected =
      "\x1a\x0f\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x20\x01\x28\x01";
  EXPECT_EQ(xla::single_device_compile_options(), expected);
}

AttentionArgs long_problem(std::vector<float>& storage, int64_t s, int64_t h, int64_t d) {
  // The plan reads shapes, never data: q, k and v are one broadcast element;
  // out must be a real tensor (a valid problem writes each row once).
  storage.assign(static_cast<size_t>(s * h * d), 0.0f);
  AttentionArgs a;
  a.q = TensorView::contiguous(storage.data(), DType::kBF16, {1, s, h, d});
  a.out = a.q;
  a.q.strides = {0, 0, 0, 0};
  a.k = a.q;
  a.v = a.q;
  return a;
}

TEST(XlaUnit, LongSequencesAreTiledUnderTheScoreLimit) {
  std::vector<float> storage;
  const AttentionArgs a = long_problem(storage, 8192, 16, 64);
  const std::vector<xla::Group> groups = xla::groups_of(a);
  ASSERT_EQ(groups.size(), 1u);
  const xla::ProgramKey key = xla::key_for(a, groups[0]);
  EXPECT_LT(key.tq, 8192);
  EXPECT_LE(key.tile_temp_bytes(), xla::kTileTempBytes);
  const size_t full_scores = size_t{16} * 8192 * 8192 * sizeof(float);
  auto backend = make_xla_backend();
  EXPECT_LT(workspace_of(*backend, a), full_scores / 8) << "B*H*S*S must not be materialized";
  EXPECT_GE(workspace_of(*backend, a), key.temp_bytes());
}

TEST(XlaUnit, BucketsPadLengths) {
  EXPECT_EQ(xla::bucket(1), 16);
  EXPECT_EQ(xla::bucket(17), 32);
  EXPECT_EQ(xla::bucket(1024), 1024);
  EXPECT_EQ(xla::bucket(1025), 2048);
  EXPECT_EQ(xla::bucket(4097), 5120);
}

}  // namespace
}  // namespace tessera
