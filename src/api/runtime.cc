// tessera::Runtime (include/tessera/runtime.h): the set-up the CLI's
// commands, the server and library users share.
#include "tessera/runtime.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "api/environment.h"
#include "attention/dispatch/dispatch_metrics.h"
#include "attention/tuning/shipped_rankings.h"
#include "attention/tuning/tuning.h"
#include "runtime/cpu_features.h"
#include "runtime/trace_export.h"

namespace tessera {

struct Runtime::Impl {
  Registry registry;
  Policy policy;
  std::unique_ptr<Context> context;
  std::unique_ptr<Dispatcher> dispatcher;
  std::string tuning_path;
  std::string tuning_note;
};

namespace {

// No usable table of the user's: the shipped default ranking for this CPU
// kind, else the priority order. `why` says why there is no user table
// ("" when none was looked for); the note says what auto uses instead.
void use_shipped_ranking(const std::string& why, Context& ctx, Dispatcher& dispatcher,
                         std::string* tuning_note) {
  const std::string kind(cpu_kind_name(cpu_kind()));
  std::shared_ptr<const TuningTable> shipped;
  const std::string prefix = why.empty() ? "no tuned table" : why;
  if (Status s = shipped_ranking(cpu_kind(), &shipped); !s.ok()) {
    *tuning_note = prefix + "; auto uses the priority order (" + s.message() + ")";
    ctx.logger().log(LogLevel::kWarning, "tuning: " + *tuning_note);
    return;
  }
  if (shipped == nullptr) {
    *tuning_note =
        prefix + "; auto uses the priority order (no shipped default ranking for " + kind + ")";
    return;
  }
  *tuning_note = prefix + "; auto uses the " + shipped->describe();
  dispatcher.set_tuning(std::move(shipped));
}

// The table named (option, else $TESSERA_TUNING), else the default one if it
// exists; without a usable one, the shipped default ranking. A table that
// cannot be used is a warning when it was named on purpose, an info line for
// a stale default.
void load_tuning(const std::string& option, Context& ctx, Dispatcher& dispatcher,
                 std::string* tuning_path, std::string* tuning_note) {
  std::string path = option.empty() ? api::environment_variable("TESSERA_TUNING") : option;
  const bool explicit_path = !path.empty();
  if (path == "none") return use_shipped_ranking("", ctx, dispatcher, tuning_note);
  if (!explicit_path) {
    path = api::default_tuning_path();
    std::error_code ec;
    if (path.empty() || !std::filesystem::exists(path, ec)) {
      return use_shipped_ranking("", ctx, dispatcher, tuning_note);
    }
  }
  auto table = std::make_shared<TuningTable>();
  if (Status s = TuningTable::load(path, current_tuning_key(), table.get()); !s.ok()) {
    ctx.logger().log(explicit_path ? LogLevel::kWarning : LogLevel::kInfo,
                     "tuning: " + s.message() + "; not used");
    return use_shipped_ranking(s.message(), ctx, dispatcher, tuning_note);
  }
  *tuning_path = path;
  dispatcher.set_tuning(std::move(table));
}

// A pool short of threads means the process is at a memory or process-count
// limit: running on at that edge would fail later and less clearly (the
// next allocation, or OpenMP's own threads, which exit the process when they
// cannot start). So the runtime is refused, naming how many could start.
// A policy under which no backend of this build could ever run is refused
// where it is given, not at the first call. Names of backends absent from
// this build are fine while another can run (a shared policy may name cuda.*
// on a CPU build); per problem the dispatcher may still find none eligible.
Status check_policy_can_run(const Policy& policy, const Registry& registry) {
  auto listed = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  std::string known;
  for (Backend* b : registry.backends()) {
    const std::string name(b->name());
    const Availability av = b->availability();
    if ((policy.only.empty() || listed(policy.only, name)) && !listed(policy.deny, name) &&
        av.available) {
      return Status::Ok();
    }
    // A backend the policy named is listed with why it cannot run here.
    const bool named = listed(policy.only, name) || listed(policy.prefer, name);
    known += (known.empty() ? "" : ", ") + name +
             (av.available ? ""
              : named      ? " (unavailable here: " + av.reason + ")"
                           : " (unavailable here)");
  }
  return invalid_option("attention", ": policy '" + policy.to_string() +
                                         "' leaves no backend that can run on this machine (this "
                                         "build has " +
                                         known + "; `tessera backends` says more)");
}

Status check_threads_started(int asked, const ThreadPool& pool) {
  if (pool.num_threads() == pool.requested_threads()) return Status::Ok();
  const std::string what = asked == 0 ? "threads = 0 (one per hardware thread: " +
                                            std::to_string(pool.requested_threads()) + ")"
                                      : "threads = " + std::to_string(asked);
  return {StatusCode::kResourceExhausted,
          what + ": the system started only " + std::to_string(pool.num_threads()) + " of them (" +
              pool.start_failure() + ": a limit on memory or processes); ask for fewer",
          "threads"};
}

}  // namespace

Status Runtime::create(const RuntimeOptions& options, std::unique_ptr<Runtime>* out) {
  auto impl = std::make_unique<Impl>();
  if (options.threads < 0) {
    return invalid_option("threads", " = " + std::to_string(options.threads) +
                                         ": give 0 (one per hardware thread) or more");
  }
  if (options.threads > ThreadPool::max_threads()) {
    return invalid_option("threads", " = " + std::to_string(options.threads) + " is more than " +
                                         std::to_string(ThreadPool::max_threads()) +
                                         ", the most this machine takes (8 per hardware thread, "
                                         "at least 64); give 0 for one per hardware thread");
  }
  TESSERA_RETURN_IF_ERROR(cpu_cap_status());
  TESSERA_RETURN_IF_ERROR(api::policy_or_environment(options.attention, &impl->policy));
  ContextOptions ctx_options;
  ctx_options.num_threads = options.threads;
  if (options.memory_budget_bytes > 0) {
    ctx_options.memory_budget_bytes = options.memory_budget_bytes;
  }
  ctx_options.reuse_memory_bytes = options.memory_reuse_bytes;
  register_builtin_backends(impl->registry);
  TESSERA_RETURN_IF_ERROR(check_policy_can_run(impl->policy, impl->registry));
  impl->context = std::make_unique<Context>(ctx_options);
  TESSERA_RETURN_IF_ERROR(check_threads_started(options.threads, impl->context->pool()));
  impl->dispatcher = std::make_unique<Dispatcher>(impl->registry, impl->policy);
  load_tuning(options.tuning, *impl->context, *impl->dispatcher, &impl->tuning_path,
              &impl->tuning_note);
  out->reset(new Runtime(std::move(impl)));
  return Status::Ok();
}

Runtime::Runtime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Runtime::~Runtime() = default;

Context& Runtime::context() { return *impl_->context; }
Registry& Runtime::registry() { return impl_->registry; }
Dispatcher& Runtime::dispatcher() { return *impl_->dispatcher; }
const Policy& Runtime::policy() const { return impl_->policy; }
const std::string& Runtime::tuning_path() const { return impl_->tuning_path; }
const std::string& Runtime::tuning_note() const { return impl_->tuning_note; }

std::string Runtime::chrome_trace() const {
  const Profiler& p = impl_->context->profiler();
  return chrome_trace_json(p.spans(), p.dropped_spans());
}

std::string Runtime::metrics_text() {
  return prometheus_text(*impl_->context, impl_->dispatcher.get());
}

}  // namespace tessera
