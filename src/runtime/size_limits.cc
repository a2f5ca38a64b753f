#include "runtime/size_limits.h"

#include <unistd.h>

namespace tessera {

uint64_t host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return UINT64_MAX;  // unknown: the allocator decides
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

Status check_host_bytes(uint64_t bytes, const std::string& what) {
  const uint64_t limit = host_memory_bytes();
  if (bytes <= limit) return Status::Ok();
  return resource_exhausted(what + " need " + std::to_string(bytes) +
                            " bytes, more than this machine's memory of " + std::to_string(limit) +
                            " bytes");
}

int64_t checked_product(std::initializer_list<int64_t> factors) {
  int64_t p = 1;
  for (int64_t f : factors) {
    if (f < 0 || __builtin_mul_overflow(p, f, &p)) return -1;
  }
  return p;
}

}  // namespace tessera
