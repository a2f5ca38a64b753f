// Test helpers for cpu.flash (see flash_test_util.h).
#include "flash_test_util.h"

#include <memory>
#include <vector>

#include "cpu_flash/cpu_flash_backend.h"
#include "cpu_flash/product_paths.h"
#include "hwy/targets.h"
#include "reference/reference_backend.h"
#include "verify/runner.h"

namespace tessera::flash_test {

namespace {

// Runs, on each target, every backend `pick` returns for that target.
template <typename Pick>
std::string compare_each_target(const AttentionCase& c, int threads, Pick&& pick) {
  Context case_ctx(ContextOptions{threads});
  auto reference = make_reference_backend();
  verify::MaterializedCase m;
  verify::Expected expected;
  Status s = verify::MaterializedCase::create(c, case_ctx.allocator(), &m);
  if (s.ok()) s = verify::Expected::compute(m, *reference, case_ctx, &expected);
  if (!s.ok()) return "harness: " + s.to_string();
  std::string failures;
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (Backend* backend : pick()) {
      std::string why;
      {
        Context ctx(ContextOptions{threads});
        const verify::CaseOutcome outcome = verify::check_backend(*backend, m, expected, ctx);
        if (outcome.verdict != verify::Verdict::kPass) {
          why = std::string(verify::verdict_name(outcome.verdict)) + ": " + outcome.summary();
        }
        for (const auto& leak : ctx.allocator().leaks()) why += " leak: " + leak.owner;
      }
      if (!why.empty()) {
        failures += std::string(hwy::TargetName(target)) + " " + std::string(backend->name()) +
                    ": " + why + "\n";
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  return failures;
}

}  // namespace

std::string compare_on_all_targets(Backend& backend, const AttentionCase& c, int threads) {
  // The problem only for can_run(): a variant whose path this target lacks
  // is unavailable there, and not run.
  const OwnedCase tensors(c);
  std::optional<AttentionProblem> problem;
  if (Status s = AttentionProblem::make(tensors.args, &problem); !s.ok()) return s.to_string();
  const Context check_ctx(ContextOptions{threads});
  return compare_each_target(c, threads, [&] {
    std::vector<Backend*> run;
    if (backend.can_run(*problem, check_ctx)) run.push_back(&backend);
    return run;
  });
}

std::string compare_paths_on_all_targets(const AttentionCase& c, int threads) {
  auto plain = make_cpu_flash_backend();
  const std::vector<std::unique_ptr<Backend>> variants = make_cpu_flash_variants();
  const OwnedCase tensors(c);  // only for the default path's choice
  return compare_each_target(c, threads, [&] {
    // The default path of this case on this target, then each other path
    // that applies to it and runs here, through its variant.
    std::vector<Backend*> run = {plain.get()};
    const cpu_flash::Products taken = cpu_flash::product_path_for(tensors.args);
    for (const auto& variant : variants) {
      for (const cpu_flash::Products path : cpu_flash::kAllPaths) {
        if (variant->name() == "cpu.flash:" + std::string(cpu_flash::path_name(path)) &&
            path != taken && cpu_flash::path_applies(path, c.dtype, c.d) &&
            cpu_flash::path_available(path)) {
          run.push_back(variant.get());
        }
      }
    }
    return run;
  });
}

bool mentions(const std::vector<std::string>& reasons, const std::string& word) {
  for (const auto& r : reasons) {
    if (r.find(word) != std::string::npos) return true;
  }
  return false;
}

}  // namespace tessera::flash_test
