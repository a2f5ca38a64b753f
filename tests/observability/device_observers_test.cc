// Shadow and canary on a device: a call served on a device is read back and
// judged on the host; a trusted or candidate backend on a device gets the
// problem staged there; a device that is not here is said, never a silent
// skip. The device is tests/verify/fake_device.h (host memory behind cuda:61).
#include <gtest/gtest.h>

#include "../verify/fake_device.h"
#include "attention/staging/staging.h"
#include "attention/tuning/tuning.h"
#include "observe_backends.h"
#include "tessera/observers.h"
#include "verify/grid.h"
#include "verify/materialize.h"

namespace tessera {
namespace {

using Logged = std::vector<std::pair<LogLevel, std::string>>;

// `inner` on the fake device, registered beside the reference.
struct DeviceFixture {
  testing::FakeDeviceMemory device;
  testing::DelegatingBackend inner;
  Registry registry;
  Context ctx;
  Logged logged;
  explicit DeviceFixture(float offset, Maturity maturity = Maturity::kStable)
      : inner("test.inner", 100, maturity, offset) {
    EXPECT_TRUE(registry.add(std::make_unique<testing::OnFakeDevice>(inner, device)).ok());
    EXPECT_TRUE(registry.add(make_reference_backend()).ok());
    ctx.logger().set_sink([this](LogLevel l, std::string_view m) { logged.emplace_back(l, m); });
  }
  bool said(LogLevel level, const std::string& needle) const {
    for (const auto& [l, m] : logged) {
      if (l == level && m.find(needle) != std::string::npos) return true;
    }
    return false;
  }
};

TEST(ShadowOnADevice, ACallServedOnADeviceIsReadBackAndJudged) {
  for (float offset : {0.0f, 0.5f}) {
    DeviceFixture f(offset);
    Dispatcher dispatcher(f.registry);
    ShadowOptions shadow;
    ASSERT_TRUE(parse_shadow("1,quarantine=0", &shadow).ok());
    dispatcher.add_observer(std::make_shared<ShadowObserver>(dispatcher, shadow));
    verify::OwnedCase p(verify::small_case());
    StagedArgs on_device;  // the caller's tensors, on the device
    ASSERT_TRUE(
        StagedArgs::stage(p.args, testing::kFakeDevice, 0, "test.caller", f.ctx, &on_device).ok());
    std::string used;
    ASSERT_TRUE(dispatcher.run(on_device.args(), f.ctx, &used).ok());
    EXPECT_EQ(used, "test.fake_device");
    const DispatchStats st = dispatcher.stats().at("test.fake_device");
    EXPECT_EQ(st.shadow_checks, 1u);
    EXPECT_EQ(st.shadow_skipped, 0u);
    EXPECT_EQ(st.shadow_mismatches, offset == 0 ? 0u : 1u);
    // The served output on the device is what the backend wrote, untouched.
    ASSERT_TRUE(on_device.copy_outputs_back(f.ctx).ok());
    verify::OwnedCase want(verify::small_case());
    ASSERT_TRUE(run_args(*f.registry.find("reference"), want.args, f.ctx).ok());
    const std::vector<float> got = p.out(), reference = want.out();
    for (size_t i = 0; i < reference.size(); ++i) ASSERT_EQ(got[i], reference[i] + offset) << i;
  }
}

TEST(ShadowOnADevice, ATrustedBackendOnADeviceGetsTheProblemStaged) {
  // Served by the (wrong) host backend, judged by the reference on the device.
  DeviceFixture f(0.0f);
  ASSERT_TRUE(f.registry
                  .add(std::make_unique<testing::DelegatingBackend>("test.wrong", 200,
                                                                    Maturity::kStable, 0.5f))
                  .ok());
  Dispatcher dispatcher(f.registry);
  ShadowOptions shadow;
  ASSERT_TRUE(parse_shadow("1,trusted=test.fake_device,quarantine=0", &shadow).ok());
  dispatcher.add_observer(std::make_shared<ShadowObserver>(dispatcher, shadow));
  verify::OwnedCase p(verify::small_case());
  std::string used;
  ASSERT_TRUE(dispatcher.run(p.args, f.ctx, &used).ok());
  EXPECT_EQ(used, "test.wrong");
  const DispatchStats st = dispatcher.stats().at("test.wrong");
  EXPECT_EQ(st.shadow_checks, 1u);
  EXPECT_EQ(st.shadow_mismatches, 1u);
  EXPECT_GT(f.device.copies_to_device, 0);
  EXPECT_GT(f.device.copies_to_host, 0);
  EXPECT_EQ(f.device.allocator().live_bytes(), 0u);
  EXPECT_TRUE(f.ctx.allocator().leaks().empty());
}

TEST(ShadowOnADevice, AnAbsentDeviceIsCountedAndWarnedOnce) {
  DeviceFixture f(0.0f);
  ASSERT_TRUE(
      f.registry
          .add(std::make_unique<testing::DelegatingBackend>("test.host", 200, Maturity::kStable))
          .ok());
  f.device.plugged_in = false;
  Dispatcher dispatcher(f.registry);
  ShadowOptions shadow;
  ASSERT_TRUE(parse_shadow("1,trusted=test.fake_device", &shadow).ok());
  dispatcher.add_observer(std::make_shared<ShadowObserver>(dispatcher, shadow));
  for (int i = 0; i < 3; ++i) {
    verify::OwnedCase p(verify::small_case());
    ASSERT_TRUE(dispatcher.run(p.args, f.ctx).ok());
  }
  const DispatchStats st = dispatcher.stats().at("test.host");
  EXPECT_EQ(st.shadow_skipped, 3u);
  EXPECT_EQ(st.shadow_checks, 0u);
  int warnings = 0;
  for (const auto& [level, m] : f.logged) warnings += level == LogLevel::kWarning;
  EXPECT_EQ(warnings, 1);
  EXPECT_TRUE(f.said(LogLevel::kWarning,
                     "shadow check of test.host skipped: test.fake_device on cuda:61: device "
                     "absent: the fake device is unplugged"));
}

TEST(CanaryOnADevice, ACandidateOnADeviceRunsStagedAndIsRecorded) {
  for (float offset : {0.0f, 0.25f}) {
    DeviceFixture f(offset, Maturity::kExperimental);
    Dispatcher dispatcher(f.registry);
    auto canary =
        std::make_shared<CanaryObserver>(dispatcher, CanaryOptions{"test.fake_device", 1.0});
    dispatcher.add_observer(canary);
    verify::OwnedCase p(verify::small_case());
    std::string used;
    ASSERT_TRUE(dispatcher.run(p.args, f.ctx, &used).ok());
    EXPECT_EQ(used, "reference");
    // records() returns a copy: keep the record, not a reference into it.
    const CanaryBucketRecord rec =
        canary->records().at("test.fake_device").at(tuning_bucket(p.args));
    EXPECT_EQ(rec.runs, 1u);
    EXPECT_EQ(rec.failures, 0u);
    EXPECT_EQ(rec.agreements, offset == 0 ? 1u : 0u);
    EXPECT_GT(f.device.copies_to_host, 0);
    EXPECT_EQ(f.device.allocator().live_bytes(), 0u);
  }
}

TEST(CanaryOnADevice, AnAbsentDeviceIsWarnedOnce) {
  DeviceFixture f(0.0f, Maturity::kExperimental);
  f.device.plugged_in = false;
  Dispatcher dispatcher(f.registry);
  auto canary =
      std::make_shared<CanaryObserver>(dispatcher, CanaryOptions{"test.fake_device", 1.0});
  dispatcher.add_observer(canary);
  for (int i = 0; i < 2; ++i) {
    verify::OwnedCase p(verify::small_case());
    ASSERT_TRUE(dispatcher.run(p.args, f.ctx).ok());
  }
  EXPECT_TRUE(canary->records().empty());
  int warnings = 0;
  for (const auto& [level, m] : f.logged) warnings += level == LogLevel::kWarning;
  EXPECT_EQ(warnings, 1);
  EXPECT_TRUE(f.said(LogLevel::kWarning,
                     "canary test.fake_device not run: the candidate on cuda:61: device absent: "
                     "the fake device is unplugged"));
}

}  // namespace
}  // namespace tessera
