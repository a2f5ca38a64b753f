// NVTX3 ranges (CUDA builds). NVTX3 is header-only: the first NVTX call in
// the process looks for a tool (NVTX_INJECTION64_PATH, set by nsys/ncu);
// without one every call returns after a null function-pointer check.
#include "runtime/nvtx_ranges.h"

#include <nvtx3/nvToolsExt.h>

#include <string>

#include "tessera/profiler.h"

namespace tessera::nvtx {

namespace {

// Created once, on first use (the tool, if any, is attached by then).
nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t handle = nvtxDomainCreateA("tessera");
  return handle;
}

}  // namespace

void push_range(const char* name) {
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = name;
  nvtxDomainRangePushEx(domain(), &attributes);
}

void pop_range() { nvtxDomainRangePop(domain()); }

ScopedRange::ScopedRange(bool enabled, std::string_view name, std::string_view backend)
    : active_(enabled) {
  if (active_) push_range(span_trace_name(name, backend).c_str());
}

}  // namespace tessera::nvtx
