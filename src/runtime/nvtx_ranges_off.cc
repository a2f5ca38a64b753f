// Builds without CUDA: no NVTX, so ranges are no-ops.
#include "runtime/nvtx_ranges.h"

namespace tessera::nvtx {

void push_range(const char* /*name*/) {}
void pop_range() {}
ScopedRange::ScopedRange(bool enabled, std::string_view /*name*/, std::string_view /*backend*/)
    : active_(enabled) {}

}  // namespace tessera::nvtx
