// Running conformance cases: the one implementation behind tests/conformance
// and `tessera verify`, so both judge a backend the same way.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/backend.h"
#include "tessera/registry.h"
#include "verify/case.h"
#include "verify/materialize.h"

namespace tessera::verify {

// kAbsent: the backend's device is not here (a CUDA build on a machine with
// no GPU) or this build cannot stage tensors onto it; nothing was judged, and
// unlike kSkip (unavailable, or rejected by check()) it says nothing of the
// backend's claims.
enum class Verdict : uint8_t { kPass, kFail, kSkip, kAbsent };
std::string_view verdict_name(Verdict v);  // "pass", "FAIL", "skip", "absent"

struct CaseOutcome {
  Verdict verdict = Verdict::kPass;
  // Skip, Absent: the reasons. Fail: each broken check, the worst element
  // included. Pass: the error summary of out (and lse).
  std::vector<std::string> messages;
  std::string summary() const;  // messages joined by "; "
};

// What a case must produce: ref64 (the reference backend run in float64 on
// f32 copies of the inputs, stored as f32) and the naive formula in the
// case's dtype, both in row order (materialize.h).
class Expected {
 public:
  static Status compute(const MaterializedCase& m, Backend& reference, Context& ctx, Expected* out);
  const float* out_ref() const { return out_ref_.as<const float>(); }
  const float* lse_ref() const { return lse_ref_.as<const float>(); }
  const float* out_naive() const { return out_naive_.as<const float>(); }
  const float* lse_naive() const { return lse_naive_.as<const float>(); }

 private:
  Buffer out_ref_, lse_ref_, out_naive_, lse_naive_;
};

// Absent when `backend`'s device is not here or cannot be staged onto
// ("device absent: ...", "device staging unsupported: ..."), skip when the
// backend is unavailable; nullopt when the suite can run it.
std::optional<CaseOutcome> cannot_run_here(const Backend& backend);

// Runs `backend` on the case (outputs poisoned first) and judges it: absent or
// skip as cannot_run_here() says, skip when check() rejects; fail on an error
// status, a throw, a broken guard band or gap, a modified input, a leak (host
// or device memory), or outputs outside the rule. A backend on a device gets
// the case staged there (attention/staging/staging.h): each guarded tensor, guard
// bands and gaps included, is copied onto the device, and after the run all
// of them are copied back, so the same checks judge it.
CaseOutcome check_backend(Backend& backend, MaterializedCase& m, const Expected& expected,
                          Context& ctx);

// Materializes `spec`, computes its expectation with `reference` once and
// checks each of `backends` on it, in order: one case of the conformance
// suite and of `tessera verify`. A harness failure fails every backend.
std::vector<CaseOutcome> run_case_on_each(const std::vector<Backend*>& backends, Backend& reference,
                                          const AttentionCase& spec, Context& ctx);

// The same for one backend.
CaseOutcome run_case(Backend& backend, Backend& reference, const AttentionCase& spec, Context& ctx);

// An invalid call: a valid base case broken by `mutate`. The error must be
// InvalidArgument naming `field`, and out must stay untouched.
struct InvalidCase {
  std::string name;
  AttentionCase base;
  std::string field;
  std::function<void(AttentionArgs& args, int32_t* cu_q, int32_t* cu_k)> mutate;
};

// Runs the invalid call through a Dispatcher with policy only:<backend>.
CaseOutcome check_invalid(const Registry& registry, std::string_view backend, const InvalidCase& c,
                          Context& ctx);

// Owners whose live bytes grew between two allocator snapshots.
std::vector<std::string> leaked_since(const std::map<std::string, OwnerStats>& before,
                                      const std::map<std::string, OwnerStats>& after);

}  // namespace tessera::verify
