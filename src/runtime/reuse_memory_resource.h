// A host memory resource that keeps large freed blocks for reuse. The
// encoder and the attention backends take their workspaces per call
// (activations, GEMM and attention scratch: ~3 GB of fresh pages over the
// 2,000-chunk embed benchmark); with the CLI's 128 KiB mmap threshold each
// came back from the kernel as zeroed pages, 729k page faults and ~3% of the
// run in the kernel. Kept blocks are handed out again for requests of at
// least half their size. Accounting is unchanged: TrackingAllocator counts a
// block freed when it is returned here; what is kept is bounded by
// `capacity` and freed when the resource goes (see docs/DECISIONS.md).
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <unordered_map>

#include "tessera/allocator.h"

namespace tessera {

class ReuseMemoryResource final : public MemoryResource {
 public:
  // Blocks smaller than this go straight to `upstream` (malloc serves them
  // from its heap without page faults anyway).
  static constexpr size_t kMinBlockBytes = size_t{1} << 20;

  ReuseMemoryResource(MemoryResource& upstream, size_t capacity);
  ReuseMemoryResource(const ReuseMemoryResource&) = delete;
  ReuseMemoryResource& operator=(const ReuseMemoryResource&) = delete;
  ~ReuseMemoryResource() override;  // frees the kept blocks

  void* allocate(size_t bytes, size_t alignment) override;
  void deallocate(void* ptr) override;

  size_t kept_bytes() const;
  uint64_t reuses() const;  // allocations served from kept blocks

 private:
  struct Kept {
    void* ptr;
    size_t bytes, alignment;
  };
  struct Size {
    size_t bytes, alignment;
  };
  MemoryResource& upstream_;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Kept> kept_;  // most recently freed first
  size_t kept_bytes_ = 0;
  uint64_t reuses_ = 0;
  std::unordered_map<void*, Size> large_;  // large blocks handed out, by pointer
};

}  // namespace tessera
