// Building the plan: the policy's order, filtered once by everything that
// does not depend on the problem, and one order per tuned bucket.
#include "attention/dispatch/dispatch_plan.h"

#include <algorithm>

namespace tessera {

namespace {

bool contains(const std::vector<std::string>& v, std::string_view name) {
  return std::find(v.begin(), v.end(), name) != v.end();
}

}  // namespace

std::vector<Candidate> ordered_candidates(const Registry& registry, const Policy& policy,
                                          const TuningEntry* tuned, bool shipped) {
  std::vector<Candidate> out;
  if (!policy.only.empty()) {
    for (const auto& n : policy.only) out.push_back({n, registry.find(n), -1});
    return out;
  }
  for (const auto& n : policy.prefer) out.push_back({n, registry.find(n), -1});
  const auto listed = [&](std::string_view name) {
    return std::any_of(out.begin(), out.end(), [&](const Candidate& c) { return c.name == name; });
  };
  // The entry's registered backends not in the prefer list, fastest first.
  std::vector<Candidate> ranked;
  if (tuned != nullptr) {
    for (size_t i = 0; i < tuned->ranking.size(); ++i) {
      const std::string& n = tuned->ranking[i].backend;
      Backend* b = registry.find(n);
      if (b != nullptr && !listed(n)) ranked.push_back({n, b, static_cast<int>(i)});
    }
  }
  if (!shipped) out.insert(out.end(), ranked.begin(), ranked.end());
  std::vector<Backend*> rest;
  for (Backend* b : registry.backends()) {
    if (!listed(b->name())) rest.push_back(b);
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](Backend* a, Backend* b) { return a->priority() > b->priority(); });
  const auto is_ranked = [&](std::string_view name) {
    return std::any_of(ranked.begin(), ranked.end(),
                       [&](const Candidate& c) { return c.name == name; });
  };
  size_t next_ranked = 0;
  for (Backend* b : rest) {
    if (!is_ranked(b->name())) {
      out.push_back({std::string(b->name()), b, -1});
    } else if (shipped) {
      out.push_back(ranked[next_ranked++]);  // a ranked backend's place, in ranking order
    }
  }
  return out;
}

std::string standing_reason(const Candidate& c, const Policy& policy,
                            const std::map<std::string, std::string>& quarantined) {
  if (c.backend == nullptr) {
    return "no backend named '" + c.name + "' is registered in this build";
  }
  if (contains(policy.deny, c.name)) return "denied by policy '" + policy.to_string() + "'";
  if (auto q = quarantined.find(c.name); q != quarantined.end()) {
    return "quarantined: " + q->second;
  }
  // The policy's own clauses before availability: a backend it cannot pick
  // is not asked, and asking can cost (xla's loads its plugin, 259 MB of
  // .venv's xla_cpu_pjrt.so, and starts the client's threads: +59 MiB RSS
  // for a default `tessera embed` that cpu.flash served whole).
  if (c.backend->capabilities().maturity == Maturity::kExperimental && !policy.allow_experimental &&
      !contains(policy.only, c.name) && !contains(policy.prefer, c.name)) {
    return "experimental: serves only under the policy clause allow:experimental or when named "
           "in only:/prefer:";
  }
  if (Availability av = c.backend->availability(); !av.available) {
    return "unavailable: " + av.reason;
  }
  return "";
}

void Dispatcher::Counters::add(const DispatchStats& d) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  calls.fetch_add(d.calls, kRelaxed);
  failures.fetch_add(d.failures, kRelaxed);
  fallbacks.fetch_add(d.fallbacks, kRelaxed);
  shadow_checks.fetch_add(d.shadow_checks, kRelaxed);
  shadow_mismatches.fetch_add(d.shadow_mismatches, kRelaxed);
  shadow_skipped.fetch_add(d.shadow_skipped, kRelaxed);
  canary_runs.fetch_add(d.canary_runs, kRelaxed);
  canary_disagreements.fetch_add(d.canary_disagreements, kRelaxed);
}

DispatchStats Dispatcher::Counters::read() const {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  DispatchStats s;
  s.calls = calls.load(kRelaxed);
  s.failures = failures.load(kRelaxed);
  s.fallbacks = fallbacks.load(kRelaxed);
  s.shadow_checks = shadow_checks.load(kRelaxed);
  s.shadow_mismatches = shadow_mismatches.load(kRelaxed);
  s.shadow_skipped = shadow_skipped.load(kRelaxed);
  s.canary_runs = canary_runs.load(kRelaxed);
  s.canary_disagreements = canary_disagreements.load(kRelaxed);
  return s;
}

std::shared_ptr<const Dispatcher::Plan> Dispatcher::Plan::build(
    const Registry& registry, Policy policy, std::shared_ptr<const TuningTable> tuning,
    std::map<std::string, std::string> quarantined,
    std::vector<std::shared_ptr<DispatchObserver>> observers, CountersByName& counters) {
  auto plan = std::make_shared<Plan>();
  plan->policy = std::move(policy);
  plan->tuning = std::move(tuning);
  plan->quarantined = std::move(quarantined);
  plan->observers = std::move(observers);
  plan->registry_size = registry.size();
  const bool shipped = plan->tuning != nullptr && plan->tuning->shipped();
  const auto counters_of = [&](const std::string& name) {
    auto it = counters.find(name);
    if (it == counters.end()) it = counters.emplace(name, std::make_unique<Counters>()).first;
    return it->second.get();
  };
  const auto servable = [&](const TuningEntry* entry) {
    std::vector<Step> order;
    for (const Candidate& c : ordered_candidates(registry, plan->policy, entry, shipped)) {
      if (standing_reason(c, plan->policy, plan->quarantined).empty()) {
        order.push_back({c.backend, counters_of(c.name)});
      }
    }
    return order;
  };
  plan->order = servable(nullptr);
  // An only: list is the user's order: a tuned table does not reorder it.
  if (plan->tuning != nullptr && plan->policy.only.empty() && !plan->tuning->entries.empty()) {
    for (uint32_t key : all_tuning_bucket_keys()) {
      if (const TuningEntry* e = plan->tuning->find(tuning_bucket_name(key))) {
        plan->tuned.emplace(key, servable(e));
      }
    }
  }
  return plan;
}

const std::vector<Dispatcher::Plan::Step>& Dispatcher::Plan::order_for(
    const AttentionProblem& p) const {
  if (!tuned.empty()) {
    auto it = tuned.find(tuning_bucket_key(p.dtype(), p.args().mask.kind, p.dims()));
    if (it != tuned.end()) return it->second;
  }
  return order;
}

}  // namespace tessera
