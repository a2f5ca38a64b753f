// Dispatcher::explain: for every candidate, chosen / eligible / rejected and
// why, in the order a call would try them. This is where reasons are spelled
// out; the dispatch path (dispatcher.cc) only asks yes or no.
#include <cstdio>
#include <string>

#include "attention/dispatch/dispatch_plan.h"
#include "tessera/dispatcher.h"

namespace tessera {

namespace {

bool contains(const std::vector<std::string>& v, std::string_view name) {
  return std::find(v.begin(), v.end(), name) != v.end();
}

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g ms", ms);
  return buf;
}

// "tuned table entry 'BUCKET' (FILE)", or "entry 'BUCKET' of the shipped
// default ranking for x86-avx2, measured on 'AMD EPYC' 2026-12-03".
std::string entry_origin(const TuningEntry& entry, const TuningTable& table) {
  if (table.shipped()) return "entry '" + entry.bucket + "' of the " + table.describe();
  return "tuned table entry '" + entry.bucket + "' (" + table.source + ")";
}

// "rank 1 of 3 in tuned table entry 'BUCKET' (FILE): a 1.2 ms, b 2 ms, c 40 ms"
std::string tuned_reason(const TuningEntry& entry, int rank, const TuningTable& table) {
  std::string s = "rank " + std::to_string(rank + 1) + " of " +
                  std::to_string(entry.ranking.size()) + " in " + entry_origin(entry, table) + ":";
  for (size_t i = 0; i < entry.ranking.size(); ++i) {
    s += (i ? ", " : " ") + entry.ranking[i].backend + " " + ms_text(entry.ranking[i].median_ms);
  }
  return s;
}

// Why the chosen candidate was chosen.
std::string chosen_reason(const Candidate& c, const Policy& policy, const TuningTable* table,
                          const TuningEntry* tuned, const std::string& bucket, bool use_table) {
  if (!policy.only.empty()) return "first eligible in the policy's only list";
  if (contains(policy.prefer, c.name)) return "first eligible in the policy's prefer list";
  if (c.tuned_rank >= 0) return "fastest eligible: " + tuned_reason(*tuned, c.tuned_rank, *table);
  std::string why = "first eligible by priority (" + std::to_string(c.backend->priority()) +
                    ") under policy '" + policy.to_string() + "'";
  if (table != nullptr && tuned == nullptr && use_table) {
    why += "; the " + table->describe() + (table->shipped() ? "," : "") + " has no entry for '" +
           bucket + "'";
  } else if (tuned != nullptr && table->shipped()) {
    why += "; " + entry_origin(*tuned, *table) + " orders only the backends it measured";
  } else if (tuned != nullptr) {
    why += "; no backend of " + entry_origin(*tuned, *table) + " is eligible";
  }
  return why;
}

}  // namespace

Explanation Dispatcher::explain(const AttentionArgs& args, const Context& ctx) const {
  std::optional<AttentionProblem> problem;
  const Status status = AttentionProblem::make(args, &problem);
  if (status.ok()) return explain(*problem, ctx);
  // Invalid args: every candidate is rejected, for its standing or the args.
  const std::shared_ptr<const Plan> p = plan();
  Explanation ex;
  ex.args_status = status;
  for (const Candidate& c : ordered_candidates(registry_, p->policy, nullptr)) {
    BackendVerdict v;
    v.name = c.name;
    std::string standing = standing_reason(c, p->policy, p->quarantined);
    v.reasons.push_back(standing.empty() ? "invalid args: " + status.message()
                                         : std::move(standing));
    ex.verdicts.push_back(std::move(v));
  }
  return ex;
}

Explanation Dispatcher::explain(const AttentionProblem& problem, const Context& ctx) const {
  const std::shared_ptr<const Plan> p = plan();
  const Policy& policy = p->policy;
  const TuningTable* table = p->tuning.get();
  const bool use_table = table != nullptr && policy.only.empty();
  const std::string bucket = use_table ? tuning_bucket(problem.args()) : "";
  const TuningEntry* tuned = use_table ? table->find(bucket) : nullptr;
  Explanation ex;
  for (const Candidate& c :
       ordered_candidates(registry_, policy, tuned, use_table && table->shipped())) {
    BackendVerdict v;
    v.name = c.name;
    if (std::string standing = standing_reason(c, policy, p->quarantined); !standing.empty()) {
      v.reasons.push_back(std::move(standing));
    } else {
      v.reasons = c.backend->reasons(problem, ctx);
    }
    if (v.reasons.empty()) {
      if (ex.chosen.empty()) {
        v.kind = BackendVerdict::Kind::kChosen;
        ex.chosen = c.name;
        v.reasons.push_back(chosen_reason(c, policy, table, tuned, bucket, use_table));
        // Which of its kernel's paths it would take (cpu.flash: the product path).
        if (const std::string_view path = c.backend->kernel_path(problem); !path.empty()) {
          v.reasons.back() += "; kernel path " + std::string(path);
        }
      } else {
        v.kind = BackendVerdict::Kind::kEligible;
        v.reasons.push_back("eligible; fallback if the chosen backend fails");
      }
    }
    ex.verdicts.push_back(std::move(v));
  }
  return ex;
}

}  // namespace tessera
