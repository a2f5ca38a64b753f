// Dispatcher: picks a backend per call by policy (and a tuned table), explains
// its choice on request, falls back to the next eligible backend when a run
// fails, and tells its observers (shadow verification, canaries:
// tessera/observers.h) about every served call. See docs/OBSERVABILITY.md.
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

// Policy text (RuntimeOptions.attention, CLI --attention=, env
// TESSERA_ATTENTION), clauses joined by ';':
//   auto                     fastest supported: tuned table, else priority (the default)
//   NAME[,NAME...]           shorthand for only:NAME,... (names without ':')
//   only:NAME[,NAME...]      use just these, in this order
//   prefer:NAME[,NAME...]    try these first, then the rest by priority
//   deny:NAME[,NAME...]      never use these
//   allow:experimental       let auto serve from experimental backends too
//   fail:NAME[,NAME...]      fault injection: these backends' runs fail (not
//                            run) with an Internal error, as a crashed kernel
//                            would, to exercise fallback and error paths
// An experimental backend serves only under allow:experimental or when named
// in an only: or prefer: list. A name may hold ':' after the clause's own, as
// variants do: only:cpu.flash:bf16dot.
struct Policy {
  std::vector<std::string> only;
  std::vector<std::string> prefer;
  std::vector<std::string> deny;
  std::vector<std::string> fail;  // fault injection: runs of these fail
  bool allow_experimental = false;
  std::string to_string() const;
};
Status parse_policy(std::string_view text, Policy* out);

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
  // Counted by the shadow and canary observers (tessera/observers.h).
  uint64_t shadow_checks = 0;
  uint64_t shadow_mismatches = 0;
  uint64_t shadow_skipped = 0;  // sampled, but the trusted run could not happen
  uint64_t canary_runs = 0;     // as the candidate
  uint64_t canary_disagreements = 0;
};

class TuningTable;  // src/attention/tuning/tuning.h

// One served call, as observers see it: after the backend returned OK, on
// the dispatching thread, before Dispatcher::run returns.
struct DispatchEvent {
  const AttentionProblem& problem;
  Backend& backend;  // the one that served
  int64_t duration_ns;
  uint64_t call;  // this dispatcher's call number, from 0
};

// Something that watches dispatch from outside the dispatcher: shadow
// verification and canaries (tessera/observers.h). It may read the caller's
// output and run other backends, never write the output.
class DispatchObserver {
 public:
  virtual ~DispatchObserver() = default;
  virtual void after_run(const DispatchEvent& event, Context& ctx) = 0;
};

// Every setter may be called while other threads dispatch: it publishes a
// new immutable plan (candidate order per shape bucket, observers), and a
// call in flight finishes with the plan it started with. A call takes no
// mutex: it loads the plan atomically and counts into atomic counters.
class Dispatcher {
 public:
  explicit Dispatcher(const Registry& registry, Policy policy = {});
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  void set_policy(Policy policy);
  Policy policy() const;
  // A decision table from `tessera tune` (null: priority order only).
  void set_tuning(std::shared_ptr<const TuningTable> table);
  void add_observer(std::shared_ptr<DispatchObserver> observer);
  void remove_observer(const DispatchObserver* observer);
  // Quarantined backends are never chosen; explain() gives the reason.
  void quarantine(const std::string& name, const std::string& reason);
  void release(const std::string& name);
  std::map<std::string, std::string> quarantined() const;  // name -> reason

  // For every backend, chosen / eligible / rejected and why (builds text).
  Explanation explain(const AttentionArgs& args, const Context& ctx) const;
  Explanation explain(const AttentionProblem& problem, const Context& ctx) const;
  // The backend that would serve `problem`, or null: the first eligible in
  // the plan's order. Builds no text.
  Backend* select(const AttentionProblem& problem, const Context& ctx) const;
  // Validates args once (an error leaves out untouched), then runs the
  // problem. `used` receives the serving backend's name.
  Status run(const AttentionArgs& args, Context& ctx, std::string* used = nullptr);
  // Tries eligible backends in order until one succeeds, then tells the
  // observers. Reasons are spelled out only on failure, when nothing is
  // eligible, or into the span when the profiler records decisions.
  Status run(const AttentionProblem& problem, Context& ctx, std::string* used = nullptr);

  const Registry& registry() const { return registry_; }
  std::map<std::string, DispatchStats> stats() const;
  // Adds `delta` to `backend`'s counters (observers count here).
  void add_stats(const std::string& backend, const DispatchStats& delta);

 private:
  struct Plan;
  struct Counters;  // one backend's DispatchStats, as atomics
  // The current plan, without the mutex unless the registry grew since it
  // was built (tests register backends late); then it is rebuilt first.
  std::shared_ptr<const Plan> plan() const;
  // Rebuilds the plan from the settings below and publishes it; call with
  // mu_ held.
  void publish_locked() const;
  Status fail(const AttentionProblem& problem, const Context& ctx, const Plan& plan, int failed,
              bool all_exhausted, const std::string& failures) const;

  const Registry& registry_;
  mutable std::mutex mu_;  // serializes setters; guards everything below but plan_
  Policy policy_;
  std::shared_ptr<const TuningTable> tuning_;
  std::map<std::string, std::string> quarantined_;
  std::vector<std::shared_ptr<DispatchObserver>> observers_;
  // Per backend name; entries are never removed, so plans point at them.
  mutable std::map<std::string, std::unique_ptr<Counters>, std::less<>> counters_;
  // Stored with mu_ held, loaded by calls without it.
  mutable std::atomic<std::shared_ptr<const Plan>> plan_;
  std::atomic<uint64_t> calls_{0};
};

}  // namespace tessera
