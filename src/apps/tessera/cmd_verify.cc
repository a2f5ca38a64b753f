// tessera verify [--quick|--full] [--backends a,b] [--json]
// Runs the conformance grid (src/verify) over every available backend of this
// build: each case is materialized and its float64 expectation computed once,
// then every backend is judged on it; invalid calls go through the dispatcher
// with policy only:<backend>. Exit code 1 on any failure.
#include <unistd.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "verify/grid.h"
#include "verify/runner.h"

namespace tessera::cli {

namespace {

using verify::CaseOutcome;
using verify::Verdict;

struct VerifyOptions {
  bool full = false;
  bool quick = false;
  std::string backends;  // empty: every registered backend
  bool json = false;
};

struct Failure {
  std::string name;
  std::vector<std::string> messages;
};

struct Tally {
  Backend* backend = nullptr;
  int passed = 0, failed = 0, skipped = 0, absent = 0;
  std::vector<Failure> failures;
  std::map<std::string, int> skip_reasons;    // reason -> cases
  std::map<std::string, int> absent_reasons;  // device absent / unsupported -> cases

  void add(const std::string& name, const CaseOutcome& o) {
    switch (o.verdict) {
      case Verdict::kPass:
        ++passed;
        break;
      case Verdict::kFail:
        ++failed, failures.push_back({name, o.messages});
        break;
      case Verdict::kSkip:
        ++skipped, ++skip_reasons[o.summary()];
        break;
      case Verdict::kAbsent:
        ++absent, ++absent_reasons[o.summary()];
        break;
    }
  }
};

Status select_backends(AppState& state, const std::string& list, std::vector<Tally>* out) {
  if (list.empty()) {
    for (Backend* b : state.registry().backends()) out->push_back({b});
    return Status::Ok();
  }
  std::stringstream ss(list);
  std::string name;
  while (std::getline(ss, name, ',')) {
    Backend* b = state.registry().find(name);
    if (b == nullptr) {
      return not_found("--backends: no backend named '" + name +
                       "' in this build (see `tessera backends`)");
    }
    out->push_back({b});
  }
  return Status::Ok();
}

// "\r[ 12/40] case" on a terminal; nothing when piped or in --json mode.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO)) {}
  void show(size_t done, size_t total, const std::string& what) const {
    if (enabled_) std::fprintf(stderr, "\r\033[K[%3zu/%zu] %s", done, total, what.c_str());
  }
  void clear() const {
    if (enabled_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  bool enabled_;
};

void run_grid(AppState& state, Backend& reference, std::vector<Tally>& tallies, bool full,
              bool show_progress) {
  const std::vector<verify::AttentionCase> cases =
      full ? verify::full_grid() : verify::quick_grid();
  const std::vector<verify::InvalidCase> invalid = verify::invalid_cases();
  const Progress progress(show_progress);
  Context& ctx = state.context();
  std::vector<Backend*> backends;
  backends.reserve(tallies.size());
  for (const Tally& t : tallies) backends.push_back(t.backend);
  const size_t total = cases.size() + invalid.size();
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string name = cases[i].name();
    progress.show(i + 1, total, name);
    const std::vector<CaseOutcome> outcomes =
        verify::run_case_on_each(backends, reference, cases[i], ctx);
    for (size_t b = 0; b < tallies.size(); ++b) tallies[b].add(name, outcomes[b]);
  }
  for (size_t i = 0; i < invalid.size(); ++i) {
    progress.show(cases.size() + i + 1, total, "invalid." + invalid[i].name);
    for (Tally& t : tallies) {
      const auto no = verify::cannot_run_here(*t.backend);
      t.add("invalid." + invalid[i].name,
            no ? *no : verify::check_invalid(state.registry(), t.backend->name(), invalid[i], ctx));
    }
  }
  progress.clear();
}

void print_text(const std::vector<Tally>& tallies) {
  for (const Tally& t : tallies) {
    std::printf("%-14.*s pass %4d  fail %4d  skip %4d  absent %4d\n",
                static_cast<int>(t.backend->name().size()), t.backend->name().data(), t.passed,
                t.failed, t.skipped, t.absent);
    for (const Failure& f : t.failures) {
      std::printf("  FAIL %s\n", f.name.c_str());
      for (const std::string& m : f.messages) std::printf("       %s\n", m.c_str());
    }
    for (const auto& [reason, count] : t.skip_reasons) {
      std::printf("  skip %d case(s): %s\n", count, reason.c_str());
    }
    for (const auto& [reason, count] : t.absent_reasons) {
      std::printf("  absent %d case(s): %s\n", count, reason.c_str());
    }
  }
}

void print_json(const std::vector<Tally>& tallies, bool full, bool ok) {
  nlohmann::json backends = nlohmann::json::array();
  for (const Tally& t : tallies) {
    nlohmann::json failures = nlohmann::json::array();
    for (const Failure& f : t.failures) {
      failures.push_back({{"case", f.name}, {"messages", f.messages}});
    }
    nlohmann::json skips = nlohmann::json::array();
    for (const auto& [reason, count] : t.skip_reasons) {
      skips.push_back({{"reason", reason}, {"cases", count}});
    }
    nlohmann::json absences = nlohmann::json::array();
    for (const auto& [reason, count] : t.absent_reasons) {
      absences.push_back({{"reason", reason}, {"cases", count}});
    }
    backends.push_back({{"name", t.backend->name()},
                        {"available", t.backend->availability().available},
                        {"passed", t.passed},
                        {"failed", t.failed},
                        {"skipped", t.skipped},
                        {"absent", t.absent},
                        {"failures", failures},
                        {"skips", skips},
                        {"absences", absences}});
  }
  const nlohmann::json out = {
      {"grid", full ? "full" : "quick"}, {"ok", ok}, {"backends", backends}};
  std::printf("%s\n", out.dump(2).c_str());
}

int run_verify(AppState& state, const VerifyOptions& o) {
  if (Status s = state.init(); !s.ok()) return fail(s);
  Backend* reference = state.registry().find("reference");
  if (reference == nullptr) return fail(not_found("the reference backend is not registered"));
  std::vector<Tally> tallies;
  if (Status s = select_backends(state, o.backends, &tallies); !s.ok()) return fail(s);
  run_grid(state, *reference, tallies, o.full, !o.json);
  bool ok = true;
  for (const Tally& t : tallies) ok = ok && t.failed == 0;
  if (o.json) {
    print_json(tallies, o.full, ok);
  } else {
    print_text(tallies);
  }
  return ok ? 0 : 1;
}

}  // namespace

void add_verify_command(CLI::App& app, AppState& state) {
  auto* cmd = app.add_subcommand(
      "verify",
      "Run the attention conformance grid on every available backend against the float64\n"
      "reference (tolerance: 2x the naive low-precision error plus a rounding floor; see\n"
      "docs/CONFORMANCE.md). Prints pass/fail/skip/absent per backend (absent: its device is\n"
      "not here); exit code 1 on any failure.");
  static VerifyOptions options;
  auto* quick = cmd->add_flag("--quick", options.quick, "The quick grid (default; ~15 cases)");
  cmd->add_flag("--full", options.full, "The full grid of tests/conformance (minutes)")
      ->excludes(quick);
  cmd->add_option("--backends", options.backends,
                  "Comma-separated backend names (default: every backend of this build)");
  cmd->add_flag("--json", options.json, "Machine-readable output");
  cmd->callback([&state] { exit_code = run_verify(state, options); });
}

}  // namespace tessera::cli
