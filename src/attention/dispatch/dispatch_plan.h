// The dispatcher's plan: everything a call reads, built when a setting
// changes and then never modified, so dispatching threads share it without
// a lock and without building text. See docs/DECISIONS.md ("Dispatch reads
// an immutable plan").
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "attention/tuning/tuning.h"
#include "tessera/dispatcher.h"

namespace tessera {

// A backend in the order a policy tries it; unknown names are kept so
// explain() can report them.
struct Candidate {
  std::string name;
  Backend* backend;  // null: not registered
  int tuned_rank;    // index in the tuned entry's ranking; -1: not from it
};
// A user's tuned entry puts its ranking before every other backend (tune
// measured them all). A shipped entry measured only the CPU backends, so it
// reorders them among the places they hold in the priority order: a faster
// device backend (cuda.flash) keeps its place ahead of them.
std::vector<Candidate> ordered_candidates(const Registry& registry, const Policy& policy,
                                          const TuningEntry* tuned, bool shipped = false);

// Why a candidate may not serve regardless of the problem (unknown, denied,
// quarantined, unavailable, experimental without permission); "" if it may.
std::string standing_reason(const Candidate& c, const Policy& policy,
                            const std::map<std::string, std::string>& quarantined);

// One backend's DispatchStats as atomics: a call counts without the lock.
// Created under the dispatcher's mutex and never removed, so plans point at
// them.
struct Dispatcher::Counters {
  std::atomic<uint64_t> calls{0}, failures{0}, fallbacks{0};
  std::atomic<uint64_t> shadow_checks{0}, shadow_mismatches{0}, shadow_skipped{0};
  std::atomic<uint64_t> canary_runs{0}, canary_disagreements{0};
  // stats() lists a backend once it has served a call or been given stats.
  std::atomic<bool> listed{false};

  void add(const DispatchStats& delta);
  DispatchStats read() const;
};

struct Dispatcher::Plan {
  using CountersByName = std::map<std::string, std::unique_ptr<Counters>, std::less<>>;
  // A backend the plan may try, with the counters its calls go to.
  struct Step {
    Backend* backend;
    Counters* counters;
  };

  Policy policy;
  std::shared_ptr<const TuningTable> tuning;
  std::map<std::string, std::string> quarantined;
  std::vector<std::shared_ptr<DispatchObserver>> observers;
  size_t registry_size = 0;
  // Backends that may serve, in the order they are tried: without a tuned
  // entry, and per tuning bucket key that has one.
  std::vector<Step> order;
  std::unordered_map<uint32_t, std::vector<Step>> tuned;

  // Adds to `counters` (the dispatcher's, under its mutex) an entry for
  // every backend the plan may try.
  static std::shared_ptr<const Plan> build(const Registry& registry, Policy policy,
                                           std::shared_ptr<const TuningTable> tuning,
                                           std::map<std::string, std::string> quarantined,
                                           std::vector<std::shared_ptr<DispatchObserver>> observers,
                                           CountersByName& counters);
  const std::vector<Step>& order_for(const AttentionProblem& p) const;
};

}  // namespace tessera
