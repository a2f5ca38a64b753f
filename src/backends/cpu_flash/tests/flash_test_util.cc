// Test helpers for cpu.flash (see flash_test_util.h).
#include "flash_test_util.h"

#include <vector>

#include "cpu_flash/flash_params.h"
#include "hwy/targets.h"
#include "reference/reference_backend.h"
#include "verify/runner.h"

namespace tessera::flash_test {

std::string compare_on_all_targets(Backend& backend, const AttentionCase& c, int threads) {
  Context case_ctx(ContextOptions{threads});
  auto reference = make_reference_backend();
  verify::MaterializedCase m;
  verify::Expected expected;
  Status s = verify::MaterializedCase::create(c, case_ctx.allocator(), &m);
  if (s.ok()) s = verify::Expected::compute(m, *reference, case_ctx, &expected);
  if (!s.ok()) return "harness: " + s.to_string();
  // On a CPU with AMX or the bf16 dot product, bf16 cases run the AVX-512
  // targets once per bf16 path there is (P rounded to bf16, as the naive
  // formula the rule compares with rounds it) and once with both switched
  // off (the f32 products); the other targets run once.
  struct Path {
    const char* name;
    bool amx, dot;
  };
  std::vector<Path> paths;
  if (c.dtype == DType::kBF16 && c.d % cpu_flash::kAmxDvStep == 0 && cpu_flash::cpu_has_amx()) {
    paths.push_back({" (amx)", true, false});
  }
  if (c.dtype == DType::kBF16 && c.d % 2 == 0 && cpu_flash::cpu_has_bf16_dot()) {
    paths.push_back({" (bf16 dot)", false, true});
  }
  paths.push_back({paths.empty() ? "" : " (bf16 paths off)", false, false});
  const bool dot_allowed = cpu_flash::bf16_dot_allowed(), amx_allowed = cpu_flash::amx_allowed();
  std::string failures;
  for (size_t i = 0; i < paths.size(); ++i) {
    const Path& path = paths[i];
    cpu_flash::set_amx_allowed(path.amx);
    cpu_flash::set_bf16_dot_allowed(path.dot);
    for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
      const bool avx512 = target == HWY_AVX3 || target == HWY_AVX3_DL;
      // Targets without the bf16 paths run the f32 products whatever the
      // switches say: once is enough.
      if (i > 0 && !avx512) continue;
      hwy::SetSupportedTargetsForTest(target);
      std::string why;
      {
        Context ctx(ContextOptions{threads});
        const verify::CaseOutcome outcome = verify::check_backend(backend, m, expected, ctx);
        if (outcome.verdict != verify::Verdict::kPass) {
          why = std::string(verify::verdict_name(outcome.verdict)) + ": " + outcome.summary();
        }
        for (const auto& leak : ctx.allocator().leaks()) why += " leak: " + leak.owner;
      }
      if (!why.empty()) {
        failures +=
            std::string(hwy::TargetName(target)) + (avx512 ? path.name : "") + ": " + why + "\n";
      }
    }
  }
  cpu_flash::set_bf16_dot_allowed(dot_allowed);
  cpu_flash::set_amx_allowed(amx_allowed);
  hwy::SetSupportedTargetsForTest(0);
  return failures;
}

}  // namespace tessera::flash_test
