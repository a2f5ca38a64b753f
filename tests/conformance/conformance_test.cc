// The one attention conformance suite. Every backend that
// register_builtin_backends() adds is run on every case of the grid
// (src/verify/grid.cc) and judged against the float64 reference by the rule in
// docs/CONFORMANCE.md. A backend added later is tested with no new code here.
//
//   Cases/Conformance.MatchesReference/<backend>__<case>  valid cases
//   Invalid/InvalidArgs.RejectedWithOutputUntouched/<backend>__<case>
//   Backends/BackendAvailability.Reported/<backend>              skipped when unavailable
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/context.h"
#include "tessera/registry.h"
#include "verify/grid.h"
#include "verify/runner.h"

namespace tessera::verify {
namespace {

const Registry& builtin() {
  static Registry registry;
  static const bool once = (register_builtin_backends(registry), true);
  (void)once;
  return registry;
}

const std::vector<AttentionCase>& grid() {
  static const std::vector<AttentionCase> cases = full_grid();
  return cases;
}

const std::vector<InvalidCase>& invalid() {
  static const std::vector<InvalidCase> cases = invalid_cases();
  return cases;
}

std::string test_name(std::string_view text) {
  std::string s(text);
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

struct Param {
  std::string backend;
  size_t index;  // into grid() or invalid()
};
// gtest prints a parameter in --gtest_list_tests and failures.
void PrintTo(const Param& p, std::ostream* os) { *os << p.backend << " case " << p.index; }

// Available backends x cases, case-major so one case's backends run together.
std::vector<Param> params(size_t count) {
  std::vector<Param> out;
  for (size_t i = 0; i < count; ++i) {
    for (Backend* b : builtin().backends()) {
      if (b->availability().available) out.push_back({std::string(b->name()), i});
    }
  }
  return out;
}

void expect_no_leaks(const Context& ctx) {
  for (const auto& leak : ctx.allocator().leaks()) {
    ADD_FAILURE() << "leak: " << leak.owner << " holds " << leak.bytes << " bytes";
  }
}

// Reports an outcome: failures with every message, skips with their reason.
void report(const CaseOutcome& o) {
  if (o.verdict == Verdict::kFail) {
    for (const std::string& m : o.messages) ADD_FAILURE() << m;
  }
}

class Conformance : public ::testing::TestWithParam<Param> {};

TEST_P(Conformance, MatchesReference) {
  Backend* backend = builtin().find(GetParam().backend);
  Backend* reference = builtin().find("reference");
  ASSERT_NE(backend, nullptr);
  ASSERT_NE(reference, nullptr) << "the reference backend defines the expected results";
  const AttentionCase& c = grid()[GetParam().index];
  CaseOutcome o;
  {
    Context ctx;
    o = run_case(*backend, *reference, c, ctx);
    expect_no_leaks(ctx);
  }
  report(o);
  if (o.verdict == Verdict::kSkip) GTEST_SKIP() << o.summary();
  if (o.verdict == Verdict::kPass) RecordProperty("errors", o.summary());
}

INSTANTIATE_TEST_SUITE_P(Cases, Conformance, ::testing::ValuesIn(params(grid().size())),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return test_name(info.param.backend) + "__" +
                                  grid()[info.param.index].name();
                         });

class InvalidArgs : public ::testing::TestWithParam<Param> {};

TEST_P(InvalidArgs, RejectedWithOutputUntouched) {
  const InvalidCase& c = invalid()[GetParam().index];
  CaseOutcome o;
  {
    Context ctx;
    o = check_invalid(builtin(), GetParam().backend, c, ctx);
    expect_no_leaks(ctx);
  }
  report(o);
}

INSTANTIATE_TEST_SUITE_P(Invalid, InvalidArgs, ::testing::ValuesIn(params(invalid().size())),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return test_name(info.param.backend) + "__" +
                                  invalid()[info.param.index].name;
                         });

class BackendAvailability : public ::testing::TestWithParam<std::string> {};

// An unavailable backend is a visible skip with its reason, never a pass.
TEST_P(BackendAvailability, Reported) {
  const Backend* b = builtin().find(GetParam());
  ASSERT_NE(b, nullptr);
  const Availability av = b->availability();
  if (!av.available) GTEST_SKIP() << b->name() << " unavailable: " << av.reason;
  const Capabilities caps = b->capabilities();
  EXPECT_FALSE(caps.dtypes.empty()) << b->name() << " claims no dtype";
  EXPECT_LE(caps.min_head_dim, caps.max_head_dim) << b->name();
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const Backend* b : builtin().backends()) names.emplace_back(b->name());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendAvailability, ::testing::ValuesIn(backend_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return test_name(info.param);
                         });

}  // namespace
}  // namespace tessera::verify
