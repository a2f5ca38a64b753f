// The dispatcher: order the registered backends by policy (and a tuned
// table), keep those whose check() passes and that are neither quarantined
// nor experimental-without-permission, run the first, fall back on failure.
// Every served call records a profiler span that says which backend ran and
// why; sampled calls are then checked (shadow_run.cc, canary_run.cc).
#include "tessera/dispatcher.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "attention/shadow.h"
#include "attention/tuning.h"
#include "runtime/nvtx_ranges.h"

namespace tessera {

// The span (and NVTX range) name of these runs.
constexpr char kDispatchSpan[] = "attention";

namespace {

bool contains(const std::vector<std::string>& v, std::string_view name) {
  return std::find(v.begin(), v.end(), name) != v.end();
}

// Backends in the order the policy tries them, with unknown names kept so
// explain() can report them.
struct Candidate {
  std::string name;
  Backend* backend;  // null: not registered
  int tuned_rank;    // index in the tuned entry's ranking; -1: not from it
};

std::vector<Candidate> ordered_candidates(const Registry& registry, const Policy& policy,
                                          const TuningEntry* tuned) {
  std::vector<Candidate> out;
  if (!policy.only.empty()) {
    for (const auto& n : policy.only) out.push_back({n, registry.find(n), -1});
    return out;
  }
  for (const auto& n : policy.prefer) out.push_back({n, registry.find(n), -1});
  const auto listed = [&](std::string_view name) {
    return std::any_of(out.begin(), out.end(), [&](const Candidate& c) { return c.name == name; });
  };
  if (tuned != nullptr) {
    for (size_t i = 0; i < tuned->ranking.size(); ++i) {
      const std::string& n = tuned->ranking[i].backend;
      Backend* b = registry.find(n);
      if (b != nullptr && !listed(n)) out.push_back({n, b, static_cast<int>(i)});
    }
  }
  std::vector<Backend*> rest;
  for (Backend* b : registry.backends()) {
    if (!listed(b->name())) rest.push_back(b);
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](Backend* a, Backend* b) { return a->priority() > b->priority(); });
  for (Backend* b : rest) out.push_back({std::string(b->name()), b, -1});
  return out;
}

std::string join_reasons(const std::vector<std::string>& reasons) {
  std::string s;
  for (const auto& r : reasons) s += (s.empty() ? "" : "; ") + r;
  return s;
}

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g ms", ms);
  return buf;
}

// "rank 1 of 3 in tuned table entry 'BUCKET' (FILE): a 1.2 ms, b 2 ms, c 40 ms"
std::string tuned_reason(const TuningEntry& entry, int rank, const TuningTable& table) {
  std::string s = "rank " + std::to_string(rank + 1) + " of " +
                  std::to_string(entry.ranking.size()) + " in tuned table entry '" +
                  entry.bucket + "' (" + table.source + "):";
  for (size_t i = 0; i < entry.ranking.size(); ++i) {
    s += (i ? ", " : " ") + entry.ranking[i].backend + " " + ms_text(entry.ranking[i].median_ms);
  }
  return s;
}

}  // namespace

Dispatcher::Dispatcher(const Registry& registry, Policy policy)
    : registry_(registry), policy_(std::move(policy)) {}

void Dispatcher::set_policy(Policy policy) { policy_ = std::move(policy); }

void Dispatcher::set_shadow(ShadowOptions options) {
  std::lock_guard<std::mutex> lock(mu_);
  shadow_ = std::move(options);
}

ShadowOptions Dispatcher::shadow() const {
  std::lock_guard<std::mutex> lock(mu_);
  return shadow_;
}

void Dispatcher::set_canary(CanaryOptions options) {
  std::lock_guard<std::mutex> lock(mu_);
  canary_ = std::move(options);
}

void Dispatcher::set_tuning(std::shared_ptr<const TuningTable> table) {
  std::lock_guard<std::mutex> lock(mu_);
  tuning_ = std::move(table);
}

Explanation Dispatcher::explain(const AttentionArgs& args, const Context& ctx) const {
  Explanation ex;
  ex.args_status = validate(args);
  std::shared_ptr<const TuningTable> table;
  std::map<std::string, std::string> quarantined;
  {
    std::lock_guard<std::mutex> lock(mu_);
    table = tuning_;
    quarantined = quarantined_;
  }
  const bool use_table = table != nullptr && policy_.only.empty() && ex.args_status.ok();
  const std::string bucket = use_table ? tuning_bucket(args) : "";
  const TuningEntry* tuned = use_table ? table->find(bucket) : nullptr;
  for (const Candidate& c : ordered_candidates(registry_, policy_, tuned)) {
    BackendVerdict v;
    v.name = c.name;
    if (c.backend == nullptr) {
      v.reasons.push_back("no backend named '" + c.name + "' is registered in this build");
    } else if (contains(policy_.deny, c.name)) {
      v.reasons.push_back("denied by policy '" + policy_.to_string() + "'");
    } else if (auto q = quarantined.find(c.name); q != quarantined.end()) {
      v.reasons.push_back("quarantined: " + q->second);
    } else if (Availability av = c.backend->availability(); !av.available) {
      v.reasons.push_back("unavailable: " + av.reason);
    } else if (c.backend->capabilities().maturity == Maturity::kExperimental &&
               !policy_.allow_experimental && !contains(policy_.only, c.name) &&
               !contains(policy_.prefer, c.name)) {
      v.reasons.push_back(
          "experimental: serves only under the policy clause allow:experimental or when named "
          "in only:/prefer:");
    } else if (!ex.args_status.ok()) {
      v.reasons.push_back("invalid args: " + ex.args_status.message());
    } else {
      v.reasons = c.backend->check(args, ctx);
    }
    if (v.reasons.empty()) {
      if (ex.chosen.empty()) {
        v.kind = BackendVerdict::Kind::kChosen;
        ex.chosen = c.name;
        std::string why;
        if (!policy_.only.empty()) {
          why = "first eligible in the policy's only list";
        } else if (contains(policy_.prefer, c.name)) {
          why = "first eligible in the policy's prefer list";
        } else if (c.tuned_rank >= 0) {
          why = "fastest eligible: " + tuned_reason(*tuned, c.tuned_rank, *table);
        } else {
          why = "first eligible by priority (" + std::to_string(c.backend->priority()) +
                ") under policy '" + policy_.to_string() + "'";
          if (table != nullptr && tuned == nullptr && use_table) {
            why += "; the tuned table (" + table->source + ") has no entry for '" + bucket + "'";
          } else if (tuned != nullptr) {
            why += "; no backend of tuned table entry '" + bucket + "' is eligible";
          }
        }
        v.reasons.push_back(why);
      } else {
        v.kind = BackendVerdict::Kind::kEligible;
        v.reasons.push_back("eligible; fallback if the chosen backend fails");
      }
    }
    ex.verdicts.push_back(std::move(v));
  }
  return ex;
}

namespace {

void fill_span(const AttentionArgs& args, Backend& backend, Span* span) {
  fill_attention_span_basics(args, backend, kDispatchSpan, span);
  const AttentionDims d = dims_of(args);
  span->b = d.batch;
  span->hq = d.hq;
  span->hkv = d.hkv;
  span->sq = d.sq;
  span->sk = d.sk;
  span->d = d.d;
  span->dv = d.dv;
  span->bytes = attention_bytes(args);
  span->workspace_bytes = backend.workspace_bytes(args);
}

}  // namespace

void fill_attention_span_basics(const AttentionArgs& args, const Backend& backend,
                                std::string name, Span* span) {
  span->name = std::move(name);
  span->backend = std::string(backend.name());
  span->shape = describe_shape(args);
  span->device = backend.device().to_string();
  span->dtype = std::string(dtype_name(args.q.dtype));
  span->mask = args.mask.describe();
  span->flops = attention_flops(args);
}

Status run_backend_guarded(Backend& backend, const AttentionArgs& args, Context& ctx) {
  try {
    return backend.run(args, ctx);
  } catch (const std::exception& e) {
    return internal_error(std::string("threw: ") + e.what());
  } catch (...) {
    return internal_error("threw a non-standard exception");
  }
}

TimedRun run_backend_timed(Backend& backend, const AttentionArgs& args, Context& ctx,
                           std::string_view span_name) {
  Profiler& profiler = ctx.profiler();
  const nvtx::ScopedRange range(profiler.enabled(), span_name, backend.name());
  TimedRun r;
  r.start_ns = profiler.now_ns();
  r.status = run_backend_guarded(backend, args, ctx);
  r.end_ns = profiler.now_ns();
  return r;
}

Status Dispatcher::run(const AttentionArgs& args, Context& ctx, std::string* used) {
  TESSERA_RETURN_IF_ERROR(validate(args));
  const uint64_t call = calls_.fetch_add(1, std::memory_order_relaxed);
  const Explanation ex = explain(args, ctx);
  std::string rejected;
  for (const auto& v : ex.verdicts) {
    if (v.kind == BackendVerdict::Kind::kRejected) {
      rejected += "; " + v.name + " rejected: " + join_reasons(v.reasons);
    }
  }
  std::string failures;
  int failed = 0;
  bool all_exhausted = true;  // every failure was a memory budget refusal
  for (const auto& v : ex.verdicts) {
    if (v.kind == BackendVerdict::Kind::kRejected) continue;
    Backend* backend = registry_.find(v.name);
    const auto [status, start, end] = run_backend_timed(*backend, args, ctx, kDispatchSpan);
    {
      std::lock_guard<std::mutex> lock(mu_);
      DispatchStats& st = stats_[v.name];
      ++st.calls;
      if (!status.ok()) ++st.failures;
      if (status.ok() && failed > 0) ++st.fallbacks;
    }
    if (!status.ok()) {
      ++failed;
      all_exhausted = all_exhausted && status.code() == StatusCode::kResourceExhausted;
      failures += "; " + v.name + " failed: " + status.to_string();
      ctx.logger().log(LogLevel::kWarning, "attention backend " + v.name + " failed on " +
                                               describe_shape(args) + ": " + status.to_string() +
                                               "; falling back");
      continue;
    }
    if (ctx.profiler().enabled()) {
      Span span;
      fill_span(args, *backend, &span);
      span.decision = v.name + ": " + join_reasons(v.reasons) + failures + rejected;
      span.start_ns = start;
      span.duration_ns = end - start;
      span.fallbacks = failed;
      ctx.profiler().record(std::move(span));
    }
    if (used != nullptr) *used = v.name;
    const Served served{v.name, backend, end - start};
    shadow_check(args, ctx, served, call);
    canary_run(args, ctx, served, call);
    return Status::Ok();
  }
  if (failed > 0) {
    const std::string message = "every eligible attention backend failed for " +
                                describe_shape(args) + failures.substr(1) + rejected;
    return all_exhausted ? resource_exhausted(message) : internal_error(message);
  }
  return unsupported("no attention backend can run " + describe_shape(args) + " under policy '" +
                     policy_.to_string() + "'" + (rejected.empty() ? "" : ":") +
                     (rejected.empty() ? "" : rejected.substr(1)));
}

std::map<std::string, DispatchStats> Dispatcher::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void Dispatcher::quarantine(const std::string& name, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  quarantined_[name] = reason;
}

void Dispatcher::release(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  quarantined_.erase(name);
}

std::map<std::string, std::string> Dispatcher::quarantined() const {
  std::lock_guard<std::mutex> lock(mu_);
  return quarantined_;
}

CanaryRecords Dispatcher::canary_records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return canary_records_;
}

}  // namespace tessera
