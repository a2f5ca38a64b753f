// Limits on what a command may allocate for tensors it builds from user
// input (shape strings, .npy shapes), checked before the allocation: without
// them a hostile or mistyped size overflows a product or asks the kernel for
// more memory than the machine has (and the overcommitted pages kill the
// process when touched).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "tessera/status.h"

namespace tessera {

// The machine's physical memory in bytes (sysconf), the cap on the tensors of
// one command; the allocator's budget, when set, applies on top.
uint64_t host_memory_bytes();

// OK when `bytes` for `what` ("bench tensors for B=...") fit host_memory_bytes();
// else a resource-exhausted error with both numbers.
Status check_host_bytes(uint64_t bytes, const std::string& what);

// The product of `factors` (each >= 0), or -1 when it exceeds INT64_MAX.
int64_t checked_product(std::initializer_list<int64_t> factors);

}  // namespace tessera
