// The dispatcher: validate once, take the plan's order for the problem's
// bucket, run the first backend whose check() passes, fall back on failure,
// count, record a span, tell the observers. No reason text is built unless a
// run fails, nothing is eligible, or the profiler records decisions.
#include "tessera/dispatcher.h"

#include <algorithm>
#include <string>
#include <utility>

#include "attention/dispatch/dispatch_plan.h"
#include "attention/dispatch/run_guarded.h"
#include "runtime/nvtx_ranges.h"

namespace tessera {

// The span (and NVTX range) name of these runs.
constexpr char kDispatchSpan[] = "attention";

namespace {

bool injects_fault(const Policy& policy, std::string_view name) {
  return std::find(policy.fail.begin(), policy.fail.end(), name) != policy.fail.end();
}

std::string join_reasons(const std::vector<std::string>& reasons) {
  std::string s;
  for (const auto& r : reasons) s += (s.empty() ? "" : "; ") + r;
  return s;
}

// "; NAME rejected: REASONS" for every rejected candidate.
std::string rejected_text(const Explanation& ex) {
  std::string s;
  for (const auto& v : ex.verdicts) {
    if (v.kind == BackendVerdict::Kind::kRejected) {
      s += "; " + v.name + " rejected: " + join_reasons(v.reasons);
    }
  }
  return s;
}

void fill_span(const AttentionProblem& p, Backend& backend, const Context& ctx, Span* span) {
  fill_attention_span_basics(p.args(), backend, kDispatchSpan, span);
  span->path = std::string(backend.kernel_path(p));
  const AttentionDims& d = p.dims();
  span->b = d.batch;
  span->hq = d.hq;
  span->hkv = d.hkv;
  span->sq = d.sq;
  span->sk = d.sk;
  span->d = d.d;
  span->dv = d.dv;
  span->bytes = attention_bytes(p.args());
  span->workspace_bytes = backend.workspace_bytes(p, ctx);
}

}  // namespace

void fill_attention_span_basics(const AttentionArgs& args, const Backend& backend, std::string name,
                                Span* span) {
  span->name = std::move(name);
  span->backend = std::string(backend.name());
  span->shape = describe_shape(args);
  span->device = backend.device().to_string();
  span->dtype = std::string(dtype_name(args.q.dtype));
  span->mask = args.mask.describe();
  span->flops = attention_flops(args);
}

Status run_backend_guarded(Backend& backend, const AttentionProblem& problem, Context& ctx) {
  try {
    return backend.run(problem, ctx);
  } catch (const std::exception& e) {
    return internal_error(std::string("threw: ") + e.what());
  } catch (...) {
    return internal_error("threw a non-standard exception");
  }
}

TimedRun run_backend_timed(Backend& backend, const AttentionProblem& problem, Context& ctx,
                           std::string_view span_name) {
  Profiler& profiler = ctx.profiler();
  const nvtx::ScopedRange range(profiler.enabled(), span_name, backend.name());
  TimedRun r;
  r.start_ns = profiler.now_ns();
  r.status = run_backend_guarded(backend, problem, ctx);
  r.end_ns = profiler.now_ns();
  return r;
}

Dispatcher::Dispatcher(const Registry& registry, Policy policy)
    : registry_(registry), policy_(std::move(policy)) {
  std::lock_guard<std::mutex> lock(mu_);
  publish_locked();
}

Dispatcher::~Dispatcher() = default;

void Dispatcher::publish_locked() const {
  plan_.store(Plan::build(registry_, policy_, tuning_, quarantined_, observers_, counters_),
              std::memory_order_release);
}

std::shared_ptr<const Dispatcher::Plan> Dispatcher::plan() const {
  std::shared_ptr<const Plan> p = plan_.load(std::memory_order_acquire);
  if (p->registry_size == registry_.size()) return p;
  // A backend registered after this dispatcher was made: take it in. (The
  // registry is not itself thread-safe: backends are added before threads
  // dispatch, so only a late test registration gets here.)
  std::lock_guard<std::mutex> lock(mu_);
  if (plan_.load(std::memory_order_relaxed)->registry_size != registry_.size()) publish_locked();
  return plan_.load(std::memory_order_relaxed);
}

void Dispatcher::set_policy(Policy policy) {
  std::lock_guard<std::mutex> lock(mu_);
  policy_ = std::move(policy);
  publish_locked();
}

Policy Dispatcher::policy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return policy_;
}

void Dispatcher::set_tuning(std::shared_ptr<const TuningTable> table) {
  std::lock_guard<std::mutex> lock(mu_);
  tuning_ = std::move(table);
  publish_locked();
}

void Dispatcher::add_observer(std::shared_ptr<DispatchObserver> observer) {
  std::lock_guard<std::mutex> lock(mu_);
  observers_.push_back(std::move(observer));
  publish_locked();
}

void Dispatcher::remove_observer(const DispatchObserver* observer) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(observers_, [&](const auto& o) { return o.get() == observer; });
  publish_locked();
}

void Dispatcher::quarantine(const std::string& name, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  quarantined_[name] = reason;
  publish_locked();
}

void Dispatcher::release(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  quarantined_.erase(name);
  publish_locked();
}

std::map<std::string, std::string> Dispatcher::quarantined() const {
  std::lock_guard<std::mutex> lock(mu_);
  return quarantined_;
}

std::map<std::string, DispatchStats> Dispatcher::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, DispatchStats> out;
  for (const auto& [name, counters] : counters_) {
    if (counters->listed.load(std::memory_order_relaxed)) out.emplace(name, counters->read());
  }
  return out;
}

void Dispatcher::add_stats(const std::string& backend, const DispatchStats& d) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = counters_.find(backend);
  if (it == counters_.end()) it = counters_.emplace(backend, std::make_unique<Counters>()).first;
  it->second->add(d);
  it->second->listed.store(true, std::memory_order_relaxed);
}

Backend* Dispatcher::select(const AttentionProblem& problem, const Context& ctx) const {
  const std::shared_ptr<const Plan> p = plan();
  for (const Plan::Step& step : p->order_for(problem)) {
    if (step.backend->can_run(problem, ctx)) return step.backend;
  }
  return nullptr;
}

Status Dispatcher::run(const AttentionArgs& args, Context& ctx, std::string* used) {
  std::optional<AttentionProblem> problem;
  TESSERA_RETURN_IF_ERROR(AttentionProblem::make(args, &problem));
  return run(*problem, ctx, used);
}

Status Dispatcher::run(const AttentionProblem& problem, Context& ctx, std::string* used) {
  const std::shared_ptr<const Plan> p = plan();
  const uint64_t call = calls_.fetch_add(1, std::memory_order_relaxed);
  std::string failures;  // "; NAME failed: STATUS" per failed backend
  int failed = 0;
  bool all_exhausted = true;  // every failure was a memory budget refusal
  for (const Plan::Step& step : p->order_for(problem)) {
    Backend* backend = step.backend;
    if (!backend->can_run(problem, ctx)) continue;
    const auto [status, start, end] =
        injects_fault(p->policy, backend->name())
            ? TimedRun{internal_error("fault injected by the attention policy's fail: clause"), 0,
                       0}
            : run_backend_timed(*backend, problem, ctx, kDispatchSpan);
    Counters& counters = *step.counters;
    counters.calls.fetch_add(1, std::memory_order_relaxed);
    if (!counters.listed.load(std::memory_order_relaxed)) {
      counters.listed.store(true, std::memory_order_relaxed);
    }
    if (!status.ok()) counters.failures.fetch_add(1, std::memory_order_relaxed);
    if (status.ok() && failed > 0) counters.fallbacks.fetch_add(1, std::memory_order_relaxed);
    if (!status.ok()) {
      ++failed;
      all_exhausted = all_exhausted && status.code() == StatusCode::kResourceExhausted;
      const std::string name(backend->name());
      failures += "; " + name + " failed: " + status.to_string();
      ctx.logger().log(LogLevel::kWarning, "attention backend " + name + " failed on " +
                                               describe_shape(problem.args()) + ": " +
                                               status.to_string() + "; falling back");
      continue;
    }
    if (ctx.profiler().enabled()) {
      Span span;
      fill_span(problem, *backend, ctx, &span);
      if (ctx.profiler().record_decisions()) {
        // The verbose trace: why this backend, and why not the others.
        const Explanation ex = explain(problem, ctx);
        std::string why;
        for (const auto& v : ex.verdicts) {
          if (v.name == backend->name()) why = join_reasons(v.reasons);
        }
        span.decision = span.backend + ": ";
        span.decision += why;
        span.decision += failures;
        span.decision += rejected_text(ex);
      } else if (failed > 0) {
        span.decision = span.backend + " after" + failures.substr(1);
      }
      span.start_ns = start;
      span.duration_ns = end - start;
      span.fallbacks = failed;
      ctx.profiler().record(std::move(span));
    }
    if (used != nullptr) *used = backend->name();
    if (!p->observers.empty()) {
      const DispatchEvent event{problem, *backend, end - start, call};
      for (const auto& observer : p->observers) observer->after_run(event, ctx);
    }
    return Status::Ok();
  }
  return fail(problem, ctx, *p, failed, all_exhausted, failures);
}

// Nothing served: now the reasons are worth their text.
Status Dispatcher::fail(const AttentionProblem& problem, const Context& ctx, const Plan& plan,
                        int failed, bool all_exhausted, const std::string& failures) const {
  const std::string rejected = rejected_text(explain(problem, ctx));
  const std::string shape = describe_shape(problem.args());
  if (failed > 0) {
    const std::string message =
        "every eligible attention backend failed for " + shape + failures.substr(1) + rejected;
    return all_exhausted ? resource_exhausted(message) : internal_error(message);
  }
  return unsupported("no attention backend can run " + shape + " under policy '" +
                     plan.policy.to_string() + "'" + (rejected.empty() ? "" : ":") +
                     (rejected.empty() ? "" : rejected.substr(1)));
}

}  // namespace tessera
