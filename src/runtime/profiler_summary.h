// The `--profile` table: one row per (span, backend) from the profiler's
// aggregates, slowest total first, then tracked memory per owner.
#pragma once

#include <string>

#include "tessera/context.h"

namespace tessera {

std::string profile_summary(const Profiler& profiler);
std::string memory_summary(const TrackingAllocator& allocator);

}  // namespace tessera
