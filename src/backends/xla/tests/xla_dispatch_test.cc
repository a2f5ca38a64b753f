// The dispatcher's view of xla: never chosen by `auto` over cpu.flash on a
// CPU, even when experimental backends are allowed; chosen when named.
#include <gtest/gtest.h>

#include <vector>

#include "tessera/context.h"
#include "tessera/dispatcher.h"
#include "tessera/registry.h"

namespace tessera {
namespace {

struct Args {
  std::vector<float> q = std::vector<float>(64 * 4 * 32, 0.5f);
  std::vector<float> out = std::vector<float>(64 * 4 * 32);
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

}  // namespace
}  // namespace tessera
