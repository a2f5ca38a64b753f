// What the Python objects hold. One tessera::Runtime per tessera.Runtime,
// with the lock that keeps its calls from overlapping: its thread pool runs
// one job at a time and an Embedder's calls must not overlap, so Python
// threads take turns here while the GIL is released for the work itself.
#pragma once

#include <nanobind/nanobind.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "status_errors.h"
#include "tessera/dispatcher.h"
#include "tessera/runtime.h"

namespace tessera::python {

struct RuntimeHandle {
  std::unique_ptr<Runtime> runtime;
  std::mutex mu;
  // Dispatchers for per-call policies ("only:cpu.flash"), over the same
  // registry and context; made on first use. Guarded by mu.
  std::map<std::string, std::unique_ptr<Dispatcher>> by_policy;
};

// Runs `work` (returning a Status) with the GIL released and the runtime's
// lock held, then raises its error, if any, as a Python exception.
template <typename Work>
void run_unlocked(RuntimeHandle& h, Work&& work) {
  Status status;
  {
    nanobind::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(h.mu);
    status = work();
  }
  throw_if_error(status);
}

// nanobind's dict has no keyword constructor: dict_of("a"_a = 1, "b"_a = x).
template <typename... Items>
nanobind::dict dict_of(Items&&... items) {
  nanobind::dict d;
  ((d[items.name_] = std::move(items.value)), ...);
  return d;
}

void bind_runtime(nanobind::module_& m);
// Runtime._plan / _run_plan and their _AttentionPlan (attention_plan.cc).
void bind_attention_plan(nanobind::module_& m, nanobind::class_<RuntimeHandle>& runtime);
void bind_embedder(nanobind::module_& m);
void bind_quantize(nanobind::module_& m);

}  // namespace tessera::python
