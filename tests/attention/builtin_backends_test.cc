// register_builtin_backends() is generated from the folders under
// src/backends/ (cmake/TesseraBackend.cmake). These checks hold for whatever
// folders a build has; they name no backend but the reference, the one folder
// every build keeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tessera/dispatcher.h"

#if TESSERA_HAVE_CUDA
#include "runtime/cuda/cuda_runtime.h"
#endif

namespace tessera {
namespace {

bool is_variant(const Backend& b) { return b.name().find(':') != std::string_view::npos; }

// TESSERA_BUILTIN_BACKEND_COUNT: how many folders built in this configuration
// (tests/attention/CMakeLists.txt). Fewer registered means two folders claim
// one name, and registry.add() refused the second. A folder's VARIANTS come
// on top, named "<backend>:<what>".
TEST(BuiltinBackends, EveryFolderRegistersUnderItsOwnName) {
  Registry registry;
  register_builtin_backends(registry);
  const std::vector<Backend*> all = registry.backends();
  EXPECT_EQ(std::count_if(all.begin(), all.end(), [](Backend* b) { return !is_variant(*b); }),
            TESSERA_BUILTIN_BACKEND_COUNT);
  EXPECT_NE(registry.find("reference"), nullptr);
}

// A variant follows its backend in registration order, shares its device and
// ranks below every other backend of that device, so `auto` never falls back
// from a kernel into a variant of the same kernel.
TEST(BuiltinBackends, VariantsFollowTheirBackendAndRankLast) {
  Registry registry;
  register_builtin_backends(registry);
  const std::vector<Backend*> all = registry.backends();
  std::string_view owner;  // the last backend that is not a variant
  int variants = 0;
  for (const Backend* b : all) {
    if (!is_variant(*b)) {
      owner = b->name();
      continue;
    }
    ++variants;
    const std::string_view name = b->name();
    EXPECT_EQ(name.substr(0, name.find(':')), owner) << name << " does not follow its backend";
    const Backend* parent = registry.find(owner);
    ASSERT_NE(parent, nullptr);
    EXPECT_EQ(b->device(), parent->device()) << name;
    for (const Backend* other : all) {
      if (!is_variant(*other) && other->device() == b->device()) {
        EXPECT_LT(b->priority(), other->priority()) << name << " vs " << other->name();
      }
    }
  }
  if (variants == 0) GTEST_SKIP() << "no folder of this build registers variants";
}

// Args of a shape any backend accepts, placed on `device` (never read: the
// backend is unavailable, so explain() rejects it before looking at data).
AttentionArgs args_on(const Backend& b, std::vector<float>& storage) {
  const Capabilities& caps = b.capabilities();
  const int64_t d = std::max(caps.min_head_dim, 8);
  storage.assign(8 * d, 0.0f);  // 4-byte slots hold any dtype
  AttentionArgs a;
  a.q = TensorView::contiguous(storage.data(), caps.dtypes.at(0), {1, 4, 2, d}, b.device());
  a.k = a.v = a.out = a.q;
  return a;
}

// A backend that cannot run here (a CUDA backend without a GPU) is still
// registered, says why, and explain() rejects it with that reason; nothing on
// another device is chosen for its tensors instead.
// (Under allow:experimental: the default policy passes over an experimental
// backend, as the CUDA ones are, before asking whether it can run.)
TEST(BuiltinBackends, UnavailableOnesSayWhyAndAreNotChosen) {
  Registry registry;
  register_builtin_backends(registry);
  Policy allow;
  ASSERT_TRUE(parse_policy("allow:experimental", &allow).ok());
  Dispatcher dispatcher(registry, allow);
  Context ctx;
  int unavailable = 0;
  for (Backend* b : registry.backends()) {
    const Availability av = b->availability();
#if TESSERA_HAVE_CUDA
    if (b->device().kind == DeviceKind::kCuda) {
      std::string why;
      const bool gpu = cuda::device_available(b->device().index, &why);
      EXPECT_EQ(av.available, gpu) << b->name();
      if (!gpu) {
        EXPECT_EQ(av.reason, why) << b->name();
      }
    }
#else
    EXPECT_NE(b->device().kind, DeviceKind::kCuda) << b->name() << " in a build without CUDA";
#endif
    if (av.available) continue;
    ++unavailable;
    EXPECT_FALSE(av.reason.empty()) << b->name();
    std::vector<float> storage;
    const Explanation ex = dispatcher.explain(args_on(*b, storage), ctx);
    const auto v = std::find_if(ex.verdicts.begin(), ex.verdicts.end(),
                                [&](const BackendVerdict& x) { return x.name == b->name(); });
    ASSERT_NE(v, ex.verdicts.end()) << b->name();
    EXPECT_EQ(v->kind, BackendVerdict::Kind::kRejected) << b->name();
    ASSERT_FALSE(v->reasons.empty()) << b->name();
    EXPECT_EQ(v->reasons[0], "unavailable: " + av.reason) << b->name();
    if (!ex.chosen.empty()) {
      EXPECT_EQ(registry.find(ex.chosen)->device(), b->device())
          << "chose " << ex.chosen << " for tensors on " << b->device().to_string();
    }
  }
  if (unavailable == 0) GTEST_SKIP() << "every backend of this build can run here";
}

}  // namespace
}  // namespace tessera
