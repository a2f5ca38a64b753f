// The dispatcher: order the registered backends by policy, keep those whose
// check() passes, run the first, fall back on failure. Every call records a
// profiler span that says which backend ran and why.
#include "tessera/dispatcher.h"

#include <algorithm>
#include <exception>
#include <string>

namespace tessera {

namespace {

bool contains(const std::vector<std::string>& v, std::string_view name) {
  return std::find(v.begin(), v.end(), name) != v.end();
}

// Backends in the order the policy tries them, with unknown names kept so
// explain() can report them.
struct Candidate {
  std::string name;
  Backend* backend;  // null: not registered
};

std::vector<Candidate> ordered_candidates(const Registry& registry, const Policy& policy) {
  std::vector<Candidate> out;
  if (!policy.only.empty()) {
    for (const auto& n : policy.only) out.push_back({n, registry.find(n)});
    return out;
  }
  for (const auto& n : policy.prefer) out.push_back({n, registry.find(n)});
  std::vector<Backend*> rest;
  for (Backend* b : registry.backends()) {
    if (!contains(policy.prefer, b->name())) rest.push_back(b);
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](Backend* a, Backend* b) { return a->priority() > b->priority(); });
  for (Backend* b : rest) out.push_back({std::string(b->name()), b});
  return out;
}

std::string join_reasons(const std::vector<std::string>& reasons) {
  std::string s;
  for (const auto& r : reasons) s += (s.empty() ? "" : "; ") + r;
  return s;
}

}  // namespace

Dispatcher::Dispatcher(const Registry& registry, Policy policy)
    : registry_(registry), policy_(std::move(policy)) {}

void Dispatcher::set_policy(Policy policy) { policy_ = std::move(policy); }

Explanation Dispatcher::explain(const AttentionArgs& args, const Context& ctx) const {
  Explanation ex;
  ex.args_status = validate(args);
  for (const Candidate& c : ordered_candidates(registry_, policy_)) {
    BackendVerdict v;
    v.name = c.name;
    if (c.backend == nullptr) {
      v.reasons.push_back("no backend named '" + c.name + "' is registered in this build");
    } else if (contains(policy_.deny, c.name)) {
      v.reasons.push_back("denied by policy '" + policy_.to_string() + "'");
    } else if (Availability av = c.backend->availability(); !av.available) {
      v.reasons.push_back("unavailable: " + av.reason);
    } else if (!ex.args_status.ok()) {
      v.reasons.push_back("invalid args: " + ex.args_status.message());
    } else {
      v.reasons = c.backend->check(args, ctx);
    }
    if (v.reasons.empty()) {
      if (ex.chosen.empty()) {
        v.kind = BackendVerdict::Kind::kChosen;
        ex.chosen = c.name;
        v.reasons.push_back(policy_.only.empty()
                                ? (contains(policy_.prefer, c.name)
                                       ? "first eligible in the policy's prefer list"
                                       : "first eligible by priority (" +
                                             std::to_string(c.backend->priority()) +
                                             ") under policy '" + policy_.to_string() + "'")
                                : "first eligible in the policy's only list");
      } else {
        v.kind = BackendVerdict::Kind::kEligible;
        v.reasons.push_back("eligible; fallback if the chosen backend fails");
      }
    }
    ex.verdicts.push_back(std::move(v));
  }
  return ex;
}

Status Dispatcher::run(const AttentionArgs& args, Context& ctx, std::string* used) {
  TESSERA_RETURN_IF_ERROR(validate(args));
  const Explanation ex = explain(args, ctx);
  std::string rejected;
  for (const auto& v : ex.verdicts) {
    if (v.kind == BackendVerdict::Kind::kRejected) {
      rejected += "; " + v.name + " rejected: " + join_reasons(v.reasons);
    }
  }
  std::string failures;
  int failed = 0;
  for (const auto& v : ex.verdicts) {
    if (v.kind == BackendVerdict::Kind::kRejected) continue;
    Backend* backend = registry_.find(v.name);
    const int64_t start = ctx.profiler().now_ns();
    Status status;
    try {
      status = backend->run(args, ctx);
    } catch (const std::exception& e) {
      status = internal_error(std::string("threw: ") + e.what());
    } catch (...) {
      status = internal_error("threw a non-standard exception");
    }
    const int64_t end = ctx.profiler().now_ns();
    {
      std::lock_guard<std::mutex> lock(mu_);
      DispatchStats& st = stats_[v.name];
      ++st.calls;
      if (!status.ok()) ++st.failures;
      if (status.ok() && failed > 0) ++st.fallbacks;
    }
    if (!status.ok()) {
      ++failed;
      failures += "; " + v.name + " failed: " + status.to_string();
      ctx.logger().log(LogLevel::kWarning, "attention backend " + v.name + " failed on " +
                                               describe_shape(args) + ": " + status.to_string() +
                                               "; falling back");
      continue;
    }
    Span span;
    span.name = "attention";
    span.backend = v.name;
    span.decision = v.name + ": " + join_reasons(v.reasons) + failures + rejected;
    span.shape = describe_shape(args);
    span.start_ns = start;
    span.duration_ns = end - start;
    span.flops = attention_flops(args);
    span.bytes = attention_bytes(args);
    span.workspace_bytes = backend->workspace_bytes(args);
    span.fallbacks = failed;
    ctx.profiler().record(std::move(span));
    if (used != nullptr) *used = v.name;
    return Status::Ok();
  }
  if (failed > 0) {
    return internal_error("every eligible attention backend failed for " + describe_shape(args) +
                          failures.substr(1) + rejected);
  }
  return unsupported("no attention backend can run " + describe_shape(args) + " under policy '" +
                     policy_.to_string() + "'" + (rejected.empty() ? "" : ":") +
                     (rejected.empty() ? "" : rejected.substr(1)));
}

std::map<std::string, DispatchStats> Dispatcher::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace tessera
