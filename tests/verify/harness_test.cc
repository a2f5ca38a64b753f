// The harness catches what it claims to: each sabotaged backend below wraps
// the reference and breaks one rule; run_case must fail (or skip) it, naming
// the fault. The unsabotaged wrapper must pass, so the checks are not too strict.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "attention/staging/staging.h"
#include "fake_device.h"
#include "tessera/registry.h"
#include "verify/grid.h"
#include "verify/runner.h"

namespace tessera::verify {
namespace {

enum class Fault {
  kNone,
  kWritePastEnd,
  kWriteBeforeStart,
  kWriteGap,
  kPerturb,
  kOneUlp,
  kNoKeyRowNotZero,
  kNanRowFinite,
  kLsePerturb,
  kLeak,
  kThrow,
  kError,
  kWritesInput,
  kReadsPastRow,
  kRejects,
  kUnavailable,
};

class Sabotaged final : public Backend {
 public:
  Sabotaged(Backend& inner, Fault fault) : inner_(inner), fault_(fault) {}
  std::string_view name() const override { return "test.sabotaged"; }
  Device device() const override { return Device::cpu(); }
  int priority() const override { return 1; }
  const Capabilities& capabilities() const override { return inner_.capabilities(); }
  Availability availability() const override {
    if (fault_ == Fault::kUnavailable) return {false, "no such device here"};
    return {};
  }
  void check(const AttentionProblem& p, const Context& ctx, Reasons& why) const override {
    if (fault_ == Fault::kRejects) return why.add("head dim 59 is not a multiple of 8");
    inner_.check(p, ctx, why);
  }
  Status run(const AttentionProblem& p, Context& ctx) override;

 private:
  Backend& inner_;
  Fault fault_;
};

float get(const TensorView& t, int64_t offset) { return load_as_f32(t.data, offset, t.dtype); }
void set(const TensorView& t, int64_t offset, float x) {
  store_from_f32(t.data, offset, t.dtype, x);
}

Status Sabotaged::run(const AttentionProblem& p, Context& ctx) {
  const AttentionArgs& args = p.args();
  if (fault_ == Fault::kThrow) throw std::runtime_error("kernel exploded");
  if (fault_ == Fault::kError) return internal_error("simulated launch failure");
  if (fault_ == Fault::kReadsPastRow) {  // reads one element past each q and k row
    AttentionArgs wide = args;
    wide.q.shape[3] += 1;
    wide.k.shape[3] += 1;
    std::optional<AttentionProblem> wide_problem;
    TESSERA_RETURN_IF_ERROR(AttentionProblem::make(wide, &wide_problem));
    return inner_.run(*wide_problem, ctx);
  }
  TESSERA_RETURN_IF_ERROR(inner_.run(p, ctx));
  const TensorView& out = args.out;
  const int64_t last =
      out.offset({out.shape[0] - 1, out.shape[1] - 1, out.shape[2] - 1, out.shape[3] - 1});
  switch (fault_) {
    case Fault::kWritePastEnd:
      set(out, last + 1, 1.0f);
      break;
    case Fault::kWriteBeforeStart:
      set(out, -1, 1.0f);
      break;
    case Fault::kWriteGap:
      set(out, out.shape[3], 1.0f);
      break;  // after row 0 (padded)
    case Fault::kPerturb:
      set(out, 0, get(out, 0) + 0.05f);
      break;
    case Fault::kOneUlp: {
      const float x = get(out, last);
      set(out, last, std::nextafter(x, x > 0 ? 2 * x : -2 * x));
      break;
    }
    case Fault::kNoKeyRowNotZero:
      set(out, 0, 1e-20f);
      break;  // row 0 sees no key
    case Fault::kNanRowFinite:
      for (int64_t i = 0; i < out.numel(); ++i) {
        const int64_t d = i % out.shape[3], h = i / out.shape[3] % out.shape[2];
        const int64_t s = i / (out.shape[3] * out.shape[2]) % out.shape[1];
        const int64_t b = i / (out.shape[3] * out.shape[2] * out.shape[1]);
        if (std::isnan(get(out, out.offset({b, s, h, d})))) set(out, out.offset({b, s, h, d}), 0);
      }
      break;
    case Fault::kLsePerturb:
      static_cast<float*>(args.lse.data)[0] += 1e-3f;
      break;
    case Fault::kLeak: {
      void* p = nullptr;
      return ctx.allocator().allocate(512, "test.sabotaged", &p);
    }
    case Fault::kWritesInput:
      set(args.q, 0, 0.0f);
      break;
    default:
      break;
  }
  return Status::Ok();
}

struct Harness : ::testing::Test {
  Registry registry;
  Backend* reference = nullptr;
  void SetUp() override {
    register_builtin_backends(registry);
    reference = registry.find("reference");
    ASSERT_NE(reference, nullptr);
  }
  // A small case: f32, padded layout (so rows have gaps), lse.
  static AttentionCase small(Mask mask = Mask::none(), int64_t sq = 7, int64_t sk = 9) {
    AttentionCase c;
    c.batch = 2;
    c.sq = sq;
    c.sk = sk;
    c.hq = 2;
    c.hkv = 1;
    c.d = c.dv = 16;
    c.lse = true;
    c.mask = mask;
    c.layout = Layout::kBSHDPadded;
    c.seed = 5;
    return c;
  }
  CaseOutcome run(Fault fault, const AttentionCase& c) {
    Sabotaged backend(*reference, fault);
    Context ctx;
    ctx.logger().set_sink([](LogLevel, std::string_view) {});  // the leak test's report
    return run_case(backend, *reference, c, ctx);
  }
  void expect_fail(Fault fault, const AttentionCase& c, const std::string& needle) {
    const CaseOutcome o = run(fault, c);
    EXPECT_EQ(o.verdict, Verdict::kFail) << o.summary();
    EXPECT_NE(o.summary().find(needle), std::string::npos) << o.summary();
  }
};

TEST_F(Harness, AnHonestBackendPasses) {
  for (const AttentionCase& c : quick_grid()) {
    const CaseOutcome o = run(Fault::kNone, c);
    EXPECT_EQ(o.verdict, Verdict::kPass) << c.name() << ": " << o.summary();
  }
}

TEST_F(Harness, OneUlpIsWithinTheFloor) {
  const CaseOutcome o = run(Fault::kOneUlp, small());
  EXPECT_EQ(o.verdict, Verdict::kPass) << o.summary();
}

TEST_F(Harness, CatchesOutOfBoundsWrites) {
  expect_fail(Fault::kWritePastEnd, small(), "out: guard band after the view");
  expect_fail(Fault::kWriteBeforeStart, small(), "out: guard band before the view");
  expect_fail(Fault::kWriteGap, small(), "out: stride gap");
}

TEST_F(Harness, CatchesAWrongValueAndNamesTheWorstElement) {
  expect_fail(Fault::kPerturb, small(), "at [b=0, i=0, h=0] d=0");
  expect_fail(Fault::kLsePerturb, small(), "lse: max|got - ref64|");
}

TEST_F(Harness, CatchesBrokenExactRows) {
  expect_fail(Fault::kNoKeyRowNotZero, small(Mask::causal(), 9, 7), "sees no key");
  AttentionCase nan = small();
  nan.nan_rows = 2;
  expect_fail(Fault::kNanRowFinite, nan, "has a NaN score");
}

TEST_F(Harness, CatchesLeaksThrowsErrorsAndInputWrites) {
  expect_fail(Fault::kLeak, small(), "leak: test.sabotaged holds 512 more bytes");
  expect_fail(Fault::kThrow, small(), "threw: kernel exploded");
  expect_fail(Fault::kError, small(), "simulated launch failure");
  expect_fail(Fault::kWritesInput, small(), "q (an input) was modified");
}

TEST_F(Harness, ReadsOutsideTheViewSeeNaN) {
  expect_fail(Fault::kReadsPastRow, small(), "out: max|got - ref64| = inf");
}

TEST_F(Harness, RejectionsAndUnavailabilityAreSkipsWithReasons) {
  CaseOutcome o = run(Fault::kRejects, small());
  EXPECT_EQ(o.verdict, Verdict::kSkip);
  EXPECT_EQ(o.summary(), "rejected by check(): head dim 59 is not a multiple of 8");
  o = run(Fault::kUnavailable, small());
  EXPECT_EQ(o.verdict, Verdict::kSkip);
  EXPECT_EQ(o.summary(), "unavailable: no such device here");
}

TEST_F(Harness, InvalidCallsFailWithTheFieldAndLeaveOutUntouched) {
  Context ctx;
  for (const InvalidCase& c : invalid_cases()) {
    const CaseOutcome o = check_invalid(registry, "reference", c, ctx);
    EXPECT_EQ(o.verdict, Verdict::kPass) << c.name << ": " << o.summary();
  }
  // The checker itself can fail: a valid call, or an error naming another field.
  InvalidCase valid = invalid_cases().front();
  valid.mutate = [](AttentionArgs&, int32_t*, int32_t*) {};
  CaseOutcome o = check_invalid(registry, "reference", valid, ctx);
  EXPECT_EQ(o.verdict, Verdict::kFail);
  EXPECT_NE(o.summary().find("got OK"), std::string::npos) << o.summary();
  EXPECT_NE(o.summary().find("out was written"), std::string::npos) << o.summary();
  InvalidCase wrong_field = invalid_cases().front();
  wrong_field.field = "no such field";
  o = check_invalid(registry, "reference", wrong_field, ctx);
  EXPECT_NE(o.summary().find("does not name 'no such field'"), std::string::npos) << o.summary();
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

// A backend on a device: the case is staged onto it (the fake device of
// fake_device.h: host memory with its own allocator) and copied back, and the
// same checks judge it.
struct HarnessOnADevice : Harness {
  testing::FakeDeviceMemory device;
  CaseOutcome run_on_device(
      Backend& inner, const AttentionCase& c,
      testing::OnFakeDevice::Fault fault = testing::OnFakeDevice::Fault::kNone) {
    testing::OnFakeDevice backend(inner, device, fault);
    Context ctx;
    ctx.logger().set_sink([](LogLevel, std::string_view) {});
    return run_case(backend, *reference, c, ctx);
  }
  CaseOutcome run_on_device(Fault fault, const AttentionCase& c) {
    Sabotaged inner(*reference, fault);
    return run_on_device(inner, c);
  }
  void expect_fail(Fault fault, const AttentionCase& c, const std::string& needle) {
    const CaseOutcome o = run_on_device(fault, c);
    EXPECT_EQ(o.verdict, Verdict::kFail) << o.summary();
    EXPECT_NE(o.summary().find(needle), std::string::npos) << o.summary();
  }
};

TEST_F(HarnessOnADevice, AnHonestBackendPassesThroughStaging) {
  for (const AttentionCase& c : quick_grid()) {
    const CaseOutcome o = run_on_device(*reference, c);
    EXPECT_EQ(o.verdict, Verdict::kPass) << c.name() << ": " << o.summary();
  }
  // Every case went there and back, and nothing stayed on the device.
  EXPECT_GT(device.copies_to_device, 0);
  EXPECT_GT(device.copies_to_host, 0);
  EXPECT_EQ(device.allocator().live_bytes(), 0u);
  EXPECT_GT(device.allocator().peak_bytes(), 0u);
}

TEST_F(HarnessOnADevice, ItRunsOnStagedTensorsOnly) {
  // The fake backend refuses host tensors: run directly on the case, it fails.
  testing::OnFakeDevice backend(*reference, device);
  Context ctx;
  MaterializedCase m;
  ASSERT_TRUE(MaterializedCase::create(small(), ctx.allocator(), &m).ok());
  AttentionArgs args = testing::OnFakeDevice::on_host(m.args());
  for (TensorView* t : {&args.q, &args.k, &args.v, &args.out, &args.lse}) {
    t->device = backend.device();
  }
  std::optional<AttentionProblem> p;
  ASSERT_TRUE(AttentionProblem::make(args, &p).ok());
  EXPECT_NE(backend.run(*p, ctx).message().find("not in fake device memory"), std::string::npos);
}

TEST_F(HarnessOnADevice, GuardBandsAndGapsComeBackFromTheDevice) {
  expect_fail(Fault::kWritePastEnd, small(), "out: guard band after the view");
  expect_fail(Fault::kWriteBeforeStart, small(), "out: guard band before the view");
  expect_fail(Fault::kWriteGap, small(), "out: stride gap");
  expect_fail(Fault::kWritesInput, small(), "q (an input) was modified");
  expect_fail(Fault::kLsePerturb, small(), "lse: max|got - ref64|");
  expect_fail(Fault::kReadsPastRow, small(), "out: max|got - ref64| = inf");
}

TEST_F(HarnessOnADevice, DeviceAndHostLeaksFail) {
  CaseOutcome o =
      run_on_device(*reference, small(), testing::OnFakeDevice::Fault::kLeaksDeviceMemory);
  EXPECT_EQ(o.verdict, Verdict::kFail) << o.summary();
  EXPECT_NE(
      o.summary().find("leak: test.fake_device holds 512 more bytes after the call (cuda:61)"),
      std::string::npos)
      << o.summary();
  expect_fail(Fault::kLeak, small(), "leak: test.sabotaged holds 512 more bytes");
}

TEST_F(HarnessOnADevice, AnAbsentDeviceIsNotARejection) {
  device.plugged_in = false;
  CaseOutcome o = run_on_device(*reference, small());
  EXPECT_EQ(o.verdict, Verdict::kAbsent);
  EXPECT_EQ(o.summary(), "device absent: the fake device is unplugged");
  EXPECT_EQ(verdict_name(o.verdict), "absent");
  EXPECT_EQ(device.copies_to_device, 0);
  device.plugged_in = true;
  o = run_on_device(Fault::kRejects, small());
  EXPECT_EQ(o.verdict, Verdict::kSkip);
  EXPECT_EQ(o.summary(), "rejected by check(): head dim 59 is not a multiple of 8");
  // A device nothing serves: absent (a CUDA build, no such GPU) or unsupported.
  const std::string why = device_staging_problem(Device::cuda(62));
  EXPECT_TRUE(why.starts_with("device absent: ") || why.starts_with("device staging unsupported: "))
      << why;
  EXPECT_EQ(device_staging_problem(Device::cpu()), "");
}

}  // namespace
}  // namespace tessera::verify
