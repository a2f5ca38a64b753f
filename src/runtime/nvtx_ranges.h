// NVTX ranges that mirror the profiler's spans, so Nsight Systems shows
// tessera's spans on its timeline (domain "tessera") under the names the
// Chrome trace gives them (span_trace_name in tessera/profiler.h).
//
// CUDA builds compile nvtx_ranges.cc (header-only NVTX3 from the CUDA
// toolkit); other builds compile nvtx_ranges_off.cc, where every call does
// nothing. Ranges are pushed only while the profiler is enabled; there is no
// switch of their own, because with no tool attached a push or pop costs one
// null function-pointer check inside NVTX (the first NVTX call in the process
// also reads NVTX_INJECTION64_PATH, once). ScopedRange also builds its name.
//
// Push and pop are per thread in NVTX, so a range must end on the thread
// that began it; ScopedRange (and ScopedSpan, which uses these) are RAII
// objects, which guarantees that.
#pragma once

#include <string_view>

namespace tessera::nvtx {

// Pushes a range named `name` on this thread's stack (domain "tessera").
void push_range(const char* name);
// Pops the innermost range this thread pushed.
void pop_range();

// One range for one scope, named span_trace_name(name, backend). Does
// nothing when `enabled` is false (pass the profiler's enabled()).
class ScopedRange {
 public:
  ScopedRange(bool enabled, std::string_view name, std::string_view backend = {});
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;
  ~ScopedRange() {
    if (active_) pop_range();
  }

 private:
  bool active_;
};

}  // namespace tessera::nvtx
