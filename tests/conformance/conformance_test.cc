// The one attention conformance suite. Every backend that
// register_builtin_backends() adds is run on every case of the grid
// (src/verify/grid.cc) and judged against the float64 reference by the rule in
// docs/CONFORMANCE.md. A backend added later is tested with no new code here.
//
//   Cases/Conformance.MatchesReference/<case>          every backend on one valid case
//   Invalid/InvalidArgs.RejectedWithOutputUntouched/<case>   every backend, one invalid call
//   Backends/BackendAvailability.Reported/<backend>    skipped when unavailable
//
// One test is one case for all backends, as `tessera verify` runs them: the
// expected results (float64 reference and the naive formula, most of a
// case's cost) are computed once and not once per backend, and a case is one
// process, not one per backend (docs/DECISIONS.md, "CI time"). A failure
// names the backend. Which backends run (default: all available):
//   TESSERA_CONFORMANCE_BACKENDS=cpu.flash,toy   only these
//   TESSERA_CONFORMANCE_EXCLUDE=xla              all but these (scripts/sanitize.sh)
// The sanitizer build runs the quick grid, and says so on stderr.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <set>
#include <sstream>
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

// The sanitizer build runs the quick grid (tests/conformance/CMakeLists.txt).
#ifdef TESSERA_CONFORMANCE_QUICK_GRID
constexpr bool kQuickGrid = true;
#else
constexpr bool kQuickGrid = false;
#endif

const std::vector<AttentionCase>& grid() {
  static const std::vector<AttentionCase> cases = kQuickGrid ? quick_grid() : full_grid();
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

std::set<std::string> env_names(const char* variable) {
  std::set<std::string> names;
  const char* value = std::getenv(variable);
  std::stringstream list(value ? value : "");
  for (std::string name; std::getline(list, name, ',');) {
    if (!name.empty()) names.insert(name);
  }
  return names;
}

// The available backends the environment selects, in registration order.
// What it leaves out is said once, so a partial run never reads as a full one.
const std::vector<Backend*>& selected() {
  static const std::vector<Backend*> backends = [] {
    const std::set<std::string> only = env_names("TESSERA_CONFORMANCE_BACKENDS");
    const std::set<std::string> exclude = env_names("TESSERA_CONFORMANCE_EXCLUDE");
    std::vector<Backend*> out;
    if (kQuickGrid) {
      std::cerr << "conformance: the quick grid (sanitizer build; the release suite runs the "
                   "full grid)\n";
    }
    for (Backend* b : builtin().backends()) {
      const std::string name(b->name());
      if (!b->availability().available) continue;  // BackendAvailability reports it
      if ((!only.empty() && !only.count(name)) || exclude.count(name)) {
        std::cerr << "conformance: " << name
                  << " not run (TESSERA_CONFORMANCE_BACKENDS / TESSERA_CONFORMANCE_EXCLUDE)\n";
        continue;
      }
      out.push_back(b);
    }
    return out;
  }();
  return backends;
}

void expect_no_leaks(const Context& ctx, std::string_view backend) {
  for (const auto& leak : ctx.allocator().leaks()) {
    ADD_FAILURE() << backend << ": leak: " << leak.owner << " holds " << leak.bytes << " bytes";
  }
}

// Reports one backend's outcome: failures with every message, under its name.
void report(std::string_view backend, const CaseOutcome& o) {
  if (o.verdict == Verdict::kFail) {
    for (const std::string& m : o.messages) ADD_FAILURE() << backend << ": " << m;
  }
  ::testing::Test::RecordProperty(test_name(backend),
                                  std::string(verdict_name(o.verdict)) + ": " + o.summary());
}

std::vector<size_t> indices(size_t count) {
  std::vector<size_t> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = i;
  return out;
}

class Conformance : public ::testing::TestWithParam<size_t> {};

TEST_P(Conformance, MatchesReference) {
  Backend* reference = builtin().find("reference");
  ASSERT_NE(reference, nullptr) << "the reference backend defines the expected results";
  const AttentionCase& c = grid()[GetParam()];
  Context ctx;
  const std::vector<CaseOutcome> outcomes = run_case_on_each(selected(), *reference, c, ctx);
  size_t skipped = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    report(selected()[i]->name(), outcomes[i]);
    if (outcomes[i].verdict == Verdict::kSkip || outcomes[i].verdict == Verdict::kAbsent) ++skipped;
  }
  // The case's buffers are freed by now: what is left, its owner names.
  // (check_backend also compares the allocator around each backend's call.)
  expect_no_leaks(ctx, "after the case");
  if (skipped != 0 && skipped == outcomes.size()) {
    GTEST_SKIP() << "every backend rejected the case or has no device here";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Conformance, ::testing::ValuesIn(indices(grid().size())),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return grid()[info.param].name();
                         });

class InvalidArgs : public ::testing::TestWithParam<size_t> {};

TEST_P(InvalidArgs, RejectedWithOutputUntouched) {
  const InvalidCase& c = invalid()[GetParam()];
  for (Backend* backend : selected()) {
    CaseOutcome o;
    {
      Context ctx;
      o = check_invalid(builtin(), backend->name(), c, ctx);
      expect_no_leaks(ctx, backend->name());
    }
    report(backend->name(), o);
  }
}

INSTANTIATE_TEST_SUITE_P(Invalid, InvalidArgs, ::testing::ValuesIn(indices(invalid().size())),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return test_name(invalid()[info.param].name);
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
