// Observers of dispatch that check the dispatcher's work from outside it:
// shadow verification against a trusted backend (which can quarantine a
// backend that disagrees) and canary runs of a candidate. Attach one with
// Dispatcher::add_observer. See docs/OBSERVABILITY.md.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "tessera/dispatcher.h"

namespace tessera {

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

// Counts into the dispatcher's stats (shadow_checks, shadow_mismatches,
// shadow_skipped) and quarantines through it.
class ShadowObserver final : public DispatchObserver {
 public:
  ShadowObserver(Dispatcher& dispatcher, ShadowOptions options);
  const ShadowOptions& options() const { return options_; }
  void after_run(const DispatchEvent& event, Context& ctx) override;

 private:
  // Counts a skip and logs it (at debug level; a warning the first time when
  // `warn_once`, for reasons that hold for every call, such as no device).
  void skip(const std::string& served, const std::string& why, Context& ctx,
            bool warn_once = false);
  Dispatcher& dispatcher_;
  const ShadowOptions options_;
  std::mutex mu_;
  std::map<std::string, uint64_t> mismatches_;  // per served backend
  std::set<std::string> warned_;                // skip messages already warned about
};

// Canary (CLI --canary NAME): a candidate backend runs in the shadow of the
// one that serves; the caller always gets the serving result. Agreement and
// speed are recorded per shape bucket (see tuning_bucket in tuning.h).
struct CanaryOptions {
  std::string backend;  // the candidate
  double rate = 1.0;    // fraction of dispatches that also run the candidate
  uint64_t seed = 1;    // with the call number, picks the sampled calls
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

// Counts into the dispatcher's stats (canary_runs, canary_disagreements).
class CanaryObserver final : public DispatchObserver {
 public:
  CanaryObserver(Dispatcher& dispatcher, CanaryOptions options);
  void after_run(const DispatchEvent& event, Context& ctx) override;
  CanaryRecords records() const;

 private:
  // Logs why the candidate could not run this call: a warning the first time.
  void not_run(const std::string& why, Context& ctx);
  Dispatcher& dispatcher_;
  const CanaryOptions options_;
  mutable std::mutex mu_;
  CanaryRecords records_;
  std::set<std::string> warned_;  // reasons the candidate could not run, said once
};

}  // namespace tessera
