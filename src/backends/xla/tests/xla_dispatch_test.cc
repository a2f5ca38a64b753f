// The dispatcher's view of xla: never chosen by `auto` over cpu.flash on a
// CPU, even when experimental backends are allowed; chosen when named; able
// to judge other backends as the shadow's trusted one.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "reference/reference_backend.h"
#include "tessera/context.h"
#include "tessera/dispatcher.h"
#include "tessera/observers.h"
#include "tessera/registry.h"
#include "xla/xla_backend.h"

namespace tessera {
namespace {

struct Args {
  std::vector<float> q = std::vector<float>(size_t{64} * 4 * 32, 0.5f);
  std::vector<float> out = std::vector<float>(size_t{64} * 4 * 32);
  AttentionArgs args;
  Args() {
    args.q = TensorView::contiguous(q.data(), DType::kF32, {1, 64, 4, 32});
    args.k = args.q;
    args.v = args.q;
    args.out = TensorView::contiguous(out.data(), DType::kF32, {1, 64, 4, 32});
  }
};

std::string chosen(const Registry& registry, const char* policy_text) {
  Policy policy;
  EXPECT_TRUE(parse_policy(policy_text, &policy).ok()) << policy_text;
  Dispatcher dispatcher(registry, policy);
  Context ctx;
  Args a;
  return dispatcher.explain(a.args, ctx).chosen;
}

TEST(XlaDispatch, AutoNeverPrefersXlaOnACpu) {
  Registry registry;
  register_builtin_backends(registry);
  ASSERT_NE(registry.find("xla"), nullptr);
  ASSERT_TRUE(registry.find("xla")->availability().available)
      << registry.find("xla")->availability().reason;
  const std::string expected = registry.find("cpu.flash") != nullptr ? "cpu.flash" : "";
  for (const char* policy : {"auto", "allow:experimental"}) {
    const std::string pick = chosen(registry, policy);
    EXPECT_NE(pick, "xla") << policy;
    if (!expected.empty()) {
      EXPECT_EQ(pick, expected) << policy;
    }
  }
  EXPECT_EQ(chosen(registry, "only:xla"), "xla");
}

// Right shape, wrong numbers: the reference's result plus one.
class WrongBackend final : public Backend {
 public:
  std::string_view name() const override { return "test.wrong"; }
  Device device() const override { return Device::cpu(); }
  int priority() const override { return 1000; }
  const Capabilities& capabilities() const override { return reference_->capabilities(); }
  Status run(const AttentionProblem& p, Context& ctx) override {
    TESSERA_RETURN_IF_ERROR(reference_->run(p, ctx));
    const AttentionArgs& args = p.args();
    float* out = static_cast<float*>(args.out.data);
    for (int64_t i = 0; i < args.out.numel(); ++i) out[i] += 1.0f;  // contiguous f32 only
    return Status::Ok();
  }

 private:
  std::unique_ptr<Backend> reference_ = make_reference_backend();
};

TEST(XlaDispatch, AsTheShadowsTrustedBackendItCatchesAWrongOne) {
  Registry registry;
  ASSERT_TRUE(registry.add(std::make_unique<WrongBackend>()).ok());
  ASSERT_TRUE(registry.add(make_xla_backend()).ok());
  ASSERT_TRUE(registry.find("xla")->availability().available)
      << registry.find("xla")->availability().reason;
  Dispatcher dispatcher(registry);
  ShadowOptions shadow;
  ASSERT_TRUE(parse_shadow("1,trusted=xla,quarantine=1", &shadow).ok());
  dispatcher.add_observer(std::make_shared<ShadowObserver>(dispatcher, shadow));
  Context ctx;
  ctx.logger().set_sink([](LogLevel, std::string_view) {});
  Args a;
  std::string used;
  ASSERT_TRUE(dispatcher.run(a.args, ctx, &used).ok());
  EXPECT_EQ(used, "test.wrong");
  const auto stats = dispatcher.stats();
  EXPECT_EQ(stats.at("test.wrong").shadow_checks, 1u);
  EXPECT_EQ(stats.at("test.wrong").shadow_mismatches, 1u);
  EXPECT_EQ(dispatcher.quarantined().count("test.wrong"), 1u);
}

}  // namespace
}  // namespace tessera
