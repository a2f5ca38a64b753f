// tessera.Runtime: the registry, one Context and the dispatcher, plus the
// attention call the Python functions build on (tessera/_attention.py).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>

#include "attention_call.h"
#include "runtime_handle.h"
#include "status_errors.h"
#include "tensor_bridge.h"
#include "tessera/attention.h"
#include "tessera/problem.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tessera::python {
namespace {

std::string attention(RuntimeHandle& h, const CallArgs& c, const std::string& policy) {
  const AttentionArgs args = to_args(c);
  std::string used;
  run_unlocked(h, [&] { return dispatcher_for(h, policy).run(args, h.runtime->context(), &used); });
  return used;
}

nb::dict explain(RuntimeHandle& h, const CallArgs& c, const std::string& policy) {
  const AttentionArgs args = to_args(c);
  Explanation e;
  {
    std::lock_guard<std::mutex> lock(h.mu);
    e = dispatcher_for(h, policy).explain(args, h.runtime->context());
  }
  nb::list verdicts;
  for (const BackendVerdict& v : e.verdicts) {
    const char* kind = v.kind == BackendVerdict::Kind::kChosen     ? "chosen"
                       : v.kind == BackendVerdict::Kind::kEligible ? "eligible"
                                                                   : "rejected";
    verdicts.append(dict_of("name"_a = v.name, "verdict"_a = kind, "reasons"_a = v.reasons));
  }
  nb::object args_error = nb::none();
  if (!e.args_status.ok()) args_error = nb::str(e.args_status.message().c_str());
  return dict_of("chosen"_a = e.chosen, "args_error"_a = args_error, "backends"_a = verdicts);
}

std::vector<std::string> dtype_names(const std::vector<DType>& dtypes) {
  std::vector<std::string> names;
  names.reserve(dtypes.size());
  for (DType t : dtypes) names.emplace_back(dtype_name(t));
  return names;
}

nb::list backends(RuntimeHandle& h) {
  nb::list out;
  for (Backend* b : h.runtime->registry().backends()) {
    const Capabilities& c = b->capabilities();
    const Availability a = b->availability();
    nb::dict features = dict_of("causal"_a = c.causal, "window"_a = c.window, "bias"_a = c.bias,
                                "varlen"_a = c.varlen, "softcap"_a = c.softcap, "lse"_a = c.lse,
                                "gqa"_a = c.gqa, "dv_differs"_a = c.dv_differs);
    out.append(dict_of("name"_a = std::string(b->name()), "device"_a = b->device().to_string(),
                       "dtypes"_a = dtype_names(c.dtypes), "min_head_dim"_a = c.min_head_dim,
                       "max_head_dim"_a = c.max_head_dim, "features"_a = features,
                       "maturity"_a = std::string(maturity_name(c.maturity)),
                       "priority"_a = b->priority(), "available"_a = a.available,
                       "reason"_a = a.reason));
  }
  return out;
}

nb::dict stats(RuntimeHandle& h) {
  std::lock_guard<std::mutex> lock(h.mu);
  std::map<std::string, DispatchStats> sum = h.runtime->dispatcher().stats();
  for (const auto& [text, d] : h.by_policy) {
    for (const auto& [name, s] : d->stats()) {
      DispatchStats& t = sum[name];
      t.calls += s.calls;
      t.failures += s.failures;
      t.fallbacks += s.fallbacks;
    }
  }
  nb::dict out;
  for (const auto& [name, s] : sum) {
    out[name.c_str()] =
        dict_of("calls"_a = s.calls, "failures"_a = s.failures, "fallbacks"_a = s.fallbacks,
                "shadow_checks"_a = s.shadow_checks, "shadow_mismatches"_a = s.shadow_mismatches,
                "canary_runs"_a = s.canary_runs, "canary_disagreements"_a = s.canary_disagreements);
  }
  return out;
}

nb::dict memory(RuntimeHandle& h) {
  const TrackingAllocator& a = h.runtime->context().allocator();
  nb::dict owners;
  for (const auto& [owner, s] : a.by_owner()) {
    owners[owner.c_str()] = dict_of("live_bytes"_a = s.live_bytes, "peak_bytes"_a = s.peak_bytes,
                                    "allocations"_a = s.allocations);
  }
  nb::object budget = nb::none();
  if (a.budget()) budget = nb::int_(*a.budget());
  return dict_of("live_bytes"_a = a.live_bytes(), "peak_bytes"_a = a.peak_bytes(),
                 "budget_bytes"_a = budget, "owners"_a = owners);
}

nb::list profile(RuntimeHandle& h) {
  nb::list out;
  for (const auto& [key, s] : h.runtime->context().profiler().aggregates()) {
    out.append(dict_of("name"_a = key.first, "backend"_a = key.second, "count"_a = s.count,
                       "errors"_a = s.errors, "seconds"_a = s.seconds,
                       "min_seconds"_a = s.min_seconds, "max_seconds"_a = s.max_seconds,
                       "flops"_a = s.flops, "bytes"_a = s.bytes, "fallbacks"_a = s.fallbacks,
                       "max_workspace_bytes"_a = s.max_workspace_bytes));
  }
  return out;
}

nb::list spans(RuntimeHandle& h) {
  nb::list out;
  for (const Span& s : h.runtime->context().profiler().spans()) {
    out.append(dict_of("name"_a = s.name, "backend"_a = s.backend, "path"_a = s.path,
                       "decision"_a = s.decision, "shape"_a = s.shape, "device"_a = s.device,
                       "start_ns"_a = s.start_ns, "duration_ns"_a = s.duration_ns,
                       "flops"_a = s.flops, "workspace_bytes"_a = s.workspace_bytes,
                       "fallbacks"_a = s.fallbacks, "ok"_a = s.ok, "thread"_a = s.thread));
  }
  return out;
}

void create(RuntimeHandle* h, const std::string& attention, int threads, size_t budget,
            const std::string& tuning) {
  RuntimeOptions o;
  o.attention = attention;
  o.threads = threads;
  o.memory_budget_bytes = budget;
  o.tuning = tuning;
  std::unique_ptr<Runtime> rt;
  Status s;
  {
    nb::gil_scoped_release release;  // loading plugins (xla) can take a while
    s = Runtime::create(o, &rt);
  }
  throw_if_error(s);
  // The policy (given, or from $TESSERA_ATTENTION) names backends of this build.
  checked_policy(rt->registry(), rt->policy().to_string());
  new (h) RuntimeHandle();
  h->runtime = std::move(rt);
}

constexpr const char* kRuntimeDoc =
    R"(A tessera runtime: the attention backends of this build, the dispatcher
that picks one per call (its policy), a thread pool and a tracked allocator,
and what they recorded (stats, memory, profile, spans).

Runtime(attention="", threads=0, memory_budget_bytes=0, tuning="")
    attention: a policy ("auto", "only:cpu.flash", "prefer:cpu.gemm;deny:xla");
        "" for $TESSERA_ATTENTION, else auto. An unknown backend name is a
        ValueError listing this build's.
    threads: worker threads, 0 for one per hardware thread.
    memory_budget_bytes: a cap on tracked memory, 0 for none (a call that
        would exceed it is a RuntimeError).
    tuning: a `tessera tune` table, "none", or "" for $TESSERA_TUNING / the
        default path.

tessera.runtime() is the process's default Runtime and tessera.configure()
replaces it; pass runtime= to scaled_dot_product_attention, Embedder or
CrossEncoder to use another. Calls on one Runtime take turns: use one per
thread to run calls in parallel.)";

// "Runtime(threads=2, attention='auto')", plus the budget when one is set.
std::string runtime_repr(RuntimeHandle& h) {
  std::string out = "Runtime(threads=" + std::to_string(h.runtime->context().pool().num_threads()) +
                    ", attention='" + h.runtime->dispatcher().policy().to_string() + "'";
  if (const auto budget = h.runtime->context().allocator().budget()) {
    out += ", memory_budget_bytes=" + std::to_string(*budget);
  }
  return out + ")";
}

}  // namespace

void bind_runtime(nb::module_& m) {
  nb::class_<RuntimeHandle> cls(m, "Runtime", kRuntimeDoc);
  cls.def("__init__", &create, "attention"_a = "", "threads"_a = 0, "memory_budget_bytes"_a = 0,
          "tuning"_a = "")
      .def("__repr__", &runtime_repr)
      .def_prop_ro(
          "policy", [](RuntimeHandle& h) { return h.runtime->dispatcher().policy().to_string(); },
          "The dispatcher's policy, as text (\"auto\", \"only:cpu.flash\").")
      .def(
          "set_policy",
          [](RuntimeHandle& h, const std::string& text) {
            h.runtime->dispatcher().set_policy(checked_policy(h.runtime->registry(), text));
          },
          "policy"_a, "Replaces the dispatcher's policy (a ValueError names a bad one).")
      .def_prop_ro(
          "threads", [](RuntimeHandle& h) { return h.runtime->context().pool().num_threads(); },
          "Worker threads of the pool.")
      .def_prop_ro(
          "tuning_path", [](RuntimeHandle& h) { return h.runtime->tuning_path(); },
          "The `tessera tune` table auto follows (\"\" for none).")
      .def_prop_ro(
          "tuning_note", [](RuntimeHandle& h) { return h.runtime->tuning_note(); },
          "Why that table, or the ranking shipped for this CPU's kind, is used.")
      .def("backends", &backends,
           "Every attention backend of this build: name, device, dtypes, head dims, features, "
           "maturity, priority, and whether it can run here (and why not).")
      .def("stats", &stats, "Per backend: calls, failures, fallbacks, shadow and canary counters.")
      .def("memory", &memory, "Tracked memory: live and peak bytes, per owner, and the budget.")
      .def("profile", &profile,
           "Per (span, backend): count, errors, seconds, FLOPs, bytes, fallbacks.")
      .def("spans", &spans,
           "The latest spans, with each call's backend, kernel path and (after "
           "set_record_decisions(True)) why that backend was chosen.")
      .def(
          "chrome_trace", [](RuntimeHandle& h) { return h.runtime->chrome_trace(); },
          "The spans as a Chrome trace (JSON text; Perfetto reads it), as `tessera --trace`.")
      .def(
          "metrics_text",
          [](RuntimeHandle& h) {
            std::lock_guard<std::mutex> lock(h.mu);
            return h.runtime->metrics_text();
          },
          "Prometheus text, as `tessera --metrics` writes and /metrics serves.")
      .def(
          "set_record_decisions",
          [](RuntimeHandle& h, bool on) {
            h.runtime->context().profiler().set_record_decisions(on);
          },
          "on"_a, "Whether spans record why each backend was chosen or rejected.");
  def_attention_call(cls, "attention", &attention,
                     "The attention contract's call, in its layout: q [B, Sq, Hq, D], k [B, Sk, "
                     "Hkv, D], v [B, Sk, Hkv, Dv], out [B, Sq, Hq, Dv] (written), lse [B, Hq, Sq] "
                     "(optional), bias broadcastable to [B, Hq, Sq, Sk]; any strides. Returns the "
                     "backend that ran it. tessera.scaled_dot_product_attention is torch's "
                     "layout and semantics over this.");
  // For the zero-copy test: the data pointer and strides of the view tessera
  // builds over an array.
  m.def("_input_view_info", [](const InputArray& a) {
    const TensorView v = input_view(a, "array", true);
    return std::make_pair(reinterpret_cast<uintptr_t>(v.data),
                          std::vector<int64_t>(v.strides.begin(), v.strides.begin() + v.rank));
  });
  def_attention_call(cls, "explain", &explain,
                     "attention()'s arguments -> which backend would run them and why each "
                     "other would not: {\"chosen\", \"args_error\", \"backends\"}. Reads no "
                     "data.");
  bind_attention_plan(m, cls);
}

}  // namespace tessera::python
