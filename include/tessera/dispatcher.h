// Dispatcher: picks a backend per call by policy (and a tuned table), explains
// its choice, falls back to the next eligible backend when a run fails, and
// can check its own work: shadow verification against a trusted backend,
// quarantine of a backend that disagrees, and canary runs of a candidate.
// See docs/OBSERVABILITY.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/backend.h"
#include "tessera/registry.h"

namespace tessera {

// Policy text (CLI --attention=, env TESSERA_ATTENTION), clauses joined by ';':
//   auto                     fastest supported: tuned table, else priority (the default)
//   NAME[,NAME...]           shorthand for only:NAME,...
//   only:NAME[,NAME...]      use just these, in this order
//   prefer:NAME[,NAME...]    try these first, then the rest by priority
//   deny:NAME[,NAME...]      never use these
//   allow:experimental       let auto serve from experimental backends too
// An experimental backend serves only under allow:experimental or when named
// in an only: or prefer: list.
struct Policy {
  std::vector<std::string> only;
  std::vector<std::string> prefer;
  std::vector<std::string> deny;
  bool allow_experimental = false;
  std::string to_string() const;
};
Status parse_policy(std::string_view text, Policy* out);
// TESSERA_ATTENTION if set (parse errors are returned), else `fallback`.
Status policy_from_environment(const Policy& fallback, Policy* out);

// Shadow verification (CLI --shadow, env TESSERA_SHADOW): re-runs a sample of
// dispatches on a trusted backend into scratch memory and compares with the
// dtype's tolerance. The caller's output is never touched.
struct ShadowOptions {
  double rate = 0;                    // fraction of dispatches checked, in [0, 1]
  std::string trusted = "reference";  // the backend that judges
  int quarantine_after = 3;           // mismatches that quarantine a backend; 0: never
  uint64_t seed = 0;                  // with the call number, picks the sampled calls
  std::string repro_dir;              // when set, a mismatch's tensors are written here
};
// "RATE[,trusted=NAME][,quarantine=N][,seed=S][,repro=DIR]", e.g. "0.01".
Status parse_shadow(std::string_view text, ShadowOptions* out);

// Canary (CLI --canary NAME): a candidate backend runs in the shadow of the
// one that serves; the caller always gets the serving result. Agreement and
// speed are recorded per shape bucket (see tuning_bucket in tuning.h).
struct CanaryOptions {
  std::string backend;  // "" disables
  double rate = 1.0;    // fraction of dispatches that also run the candidate
};
struct CanaryBucketRecord {
  uint64_t runs = 0;
  uint64_t agreements = 0;  // within the dtype's tolerance of the served result
  uint64_t failures = 0;    // the candidate returned an error
  double max_abs_error = 0;
  double serving_seconds = 0;  // summed over runs, the serving backend's time
  double canary_seconds = 0;   // and the candidate's
  std::string serving;         // the backend it was compared with (last run)
};
// backend -> bucket -> record
using CanaryRecords = std::map<std::string, std::map<std::string, CanaryBucketRecord>>;

struct BackendVerdict {
  std::string name;
  enum class Kind { kChosen, kEligible, kRejected } kind = Kind::kRejected;
  std::vector<std::string> reasons;  // for rejected: why; for chosen: why it
};
struct Explanation {
  Status args_status;                    // invalid args: nothing is eligible
  std::vector<BackendVerdict> verdicts;  // in the order they would be tried
  std::string chosen;                    // "" when none
};

struct DispatchStats {
  uint64_t calls = 0;
  uint64_t failures = 0;   // runs that returned an error or threw
  uint64_t fallbacks = 0;  // calls served by a later backend after a failure
  uint64_t shadow_checks = 0;
  uint64_t shadow_mismatches = 0;
  uint64_t shadow_skipped = 0;  // sampled, but the trusted run could not happen
  uint64_t canary_runs = 0;     // as the candidate
  uint64_t canary_disagreements = 0;
};

class TuningTable;  // src/attention/tuning.h

class Dispatcher {
 public:
  explicit Dispatcher(const Registry& registry, Policy policy = {});
  void set_policy(Policy policy);
  const Policy& policy() const { return policy_; }
  void set_shadow(ShadowOptions options);
  ShadowOptions shadow() const;
  void set_canary(CanaryOptions options);
  // A decision table from `tessera tune` (null: priority order only).
  void set_tuning(std::shared_ptr<const TuningTable> table);

  Explanation explain(const AttentionArgs& args, const Context& ctx) const;
  // Validates args (an error leaves out untouched), then tries eligible
  // backends in order until one succeeds. `used` receives its name.
  Status run(const AttentionArgs& args, Context& ctx, std::string* used = nullptr);

  std::map<std::string, DispatchStats> stats() const;
  // Quarantined backends are never chosen; explain() gives the reason.
  void quarantine(const std::string& name, const std::string& reason);
  void release(const std::string& name);
  std::map<std::string, std::string> quarantined() const;  // name -> reason
  CanaryRecords canary_records() const;

 private:
  struct Served {
    std::string name;
    Backend* backend;
    int64_t duration_ns;
  };
  void shadow_check(const AttentionArgs& args, Context& ctx, const Served& served,
                    uint64_t call);
  void canary_run(const AttentionArgs& args, Context& ctx, const Served& served, uint64_t call);

  const Registry& registry_;
  Policy policy_;
  mutable std::mutex mu_;
  std::map<std::string, DispatchStats> stats_;
  ShadowOptions shadow_;
  CanaryOptions canary_;
  std::shared_ptr<const TuningTable> tuning_;
  std::map<std::string, std::string> quarantined_;
  CanaryRecords canary_records_;
  std::atomic<uint64_t> calls_{0};
};

}  // namespace tessera
