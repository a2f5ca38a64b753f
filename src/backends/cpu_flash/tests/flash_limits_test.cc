// cpu.flash limits: what check() rejects and why, and the workspace: tracked,
// reported by workspace_bytes, O(tile) whatever the sequence length.
#include <gtest/gtest.h>

#include <vector>

#include "cpu_flash/cpu_flash_backend.h"
#include "cpu_flash/flash_params.h"
#include "flash_test_util.h"

namespace tessera::flash_test {
namespace {

TEST(CpuFlashLimits, RejectsHeadDimsAboveTheTileMaximum) {
  auto backend = make_cpu_flash_backend();
  Context ctx(ContextOptions{1});
  AttentionCase c;
  c.d = c.dv = cpu_flash::kMaxHeadDim + 1;
  const OwnedCase big_d(c);
  const auto reasons = check_args(*backend, big_d.args, ctx);
  EXPECT_TRUE(mentions(reasons, "head dim D = 257")) << reasons.size();
  c.d = 64;
  const OwnedCase big_dv(c);
  EXPECT_TRUE(mentions(check_args(*backend, big_dv.args, ctx), "Dv = 257"));
  // run() refuses too, called directly, with the reason, and writes nothing.
  std::optional<AttentionProblem> valid;
  ASSERT_TRUE(AttentionProblem::make(big_dv.args, &valid).ok());
  const Status status = backend->run(*valid, ctx);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find("Dv = 257"), std::string::npos) << status.message();
}

TEST(CpuFlashLimits, RejectsTensorsNotOnTheCpu) {
  auto backend = make_cpu_flash_backend();
  Context ctx(ContextOptions{1});
  const OwnedCase p(AttentionCase{});
  AttentionArgs args = p.args;
  for (TensorView* t : {&args.q, &args.k, &args.v, &args.out}) t->device = Device::cuda(0);
  EXPECT_TRUE(mentions(check_args(*backend, args, ctx), "cuda:0"));
}

TEST(CpuFlashLimits, RejectsWorkspaceOverTheBudgetWithTheNumbers) {
  auto backend = make_cpu_flash_backend();
  Context ctx(ContextOptions{1, size_t{1024}});
  AttentionCase c;
  c.sq = c.sk = 128;
  const OwnedCase p(c);
  const auto reasons = check_args(*backend, p.args, ctx);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons[0].find("budget 1024 bytes"), std::string::npos) << reasons[0];
}

TEST(CpuFlashLimits, WorkspaceIsTrackedBoundedAndIndependentOfLength) {
  auto backend = make_cpu_flash_backend();
  size_t peaks[2] = {};
  const int64_t lengths[2] = {2048, 8192};
  for (int i = 0; i < 2; ++i) {
    Context ctx(ContextOptions{2});
    AttentionCase c;
    c.sq = c.sk = lengths[i];
    c.d = c.dv = 64;
    c.mask = Mask::causal();
    const OwnedCase p(c);
    ASSERT_TRUE(run_args(*backend, p.args, ctx).ok());
    peaks[i] = ctx.allocator().by_owner()["cpu.flash"].peak_bytes;
    EXPECT_GT(peaks[i], 0u) << "the workspace must go through the tracking allocator";
    EXPECT_TRUE(ctx.allocator().leaks().empty());
  }
  // O(tile): a 4x longer sequence (16x the score matrix) needs no more.
  EXPECT_EQ(peaks[0], peaks[1]);
  EXPECT_LT(peaks[1], size_t{2} << 20) << "far below the 256 MiB of an 8192^2 score matrix";
}

TEST(CpuFlashLimits, ReportsItselfHonestly) {
  auto backend = make_cpu_flash_backend();
  EXPECT_EQ(backend->name(), "cpu.flash");
  EXPECT_EQ(backend->priority(), 100);
  const Capabilities caps = backend->capabilities();
  EXPECT_EQ(caps.max_head_dim, cpu_flash::kMaxHeadDim);
  EXPECT_TRUE(caps.causal && caps.window && caps.bias && caps.varlen && caps.softcap &&
              caps.lse && caps.gqa && caps.dv_differs);
  AttentionCase c;
  c.sq = c.sk = 300;
  const OwnedCase p(c);
  std::optional<AttentionProblem> valid;
  ASSERT_TRUE(AttentionProblem::make(p.args, &valid).ok());
  // Sized for the context's threads: one slice each.
  const size_t one = backend->workspace_bytes(*valid, Context(ContextOptions{1}));
  EXPECT_GT(one, 0u);
  EXPECT_GT(backend->workspace_bytes(*valid, Context(ContextOptions{2})), one);
}

}  // namespace
}  // namespace tessera::flash_test
