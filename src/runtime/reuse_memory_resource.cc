#include "runtime/reuse_memory_resource.h"

#include <vector>

namespace tessera {

namespace {

// Large blocks are taken in size classes an eighth of a power of two apart,
// so a batch a few tokens longer than the last one still fits the block the
// last one freed (without classes every slightly larger request took a fresh
// block while the kept one stayed resident: peak RSS 341 vs 197 MB on the
// embed benchmark). Pages of a class's slack that are never touched are
// never resident.
size_t size_class(size_t bytes) {
  size_t power = 1;
  while (power * 2 <= bytes) {
    power *= 2;
  }
  const size_t step = power / 8;
  return (bytes + step - 1) / step * step;
}

}  // namespace

ReuseMemoryResource::ReuseMemoryResource(MemoryResource& upstream, size_t capacity)
    : upstream_(upstream), capacity_(capacity) {}

ReuseMemoryResource::~ReuseMemoryResource() {
  for (const Kept& k : kept_) {
    upstream_.deallocate(k.ptr);
  }
}

void* ReuseMemoryResource::allocate(size_t bytes, size_t alignment) {
  if (bytes < kMinBlockBytes) {
    return upstream_.allocate(bytes, alignment);
  }
  std::vector<void*> release;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Best fit among the kept blocks no more than twice the request.
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      const bool fits =
          it->bytes >= bytes && it->bytes / 2 <= bytes && it->alignment % alignment == 0;
      if (fits && (best == kept_.end() || it->bytes < best->bytes)) {
        best = it;
      }
    }
    if (best != kept_.end()) {
      void* ptr = best->ptr;
      large_[ptr] = Size{best->bytes, best->alignment};
      kept_bytes_ -= best->bytes;
      kept_.erase(best);
      ++reuses_;
      return ptr;
    }
    // A miss: kept blocks smaller than this but at least half of it are the previous
    // generation of this workspace (the block about to be made serves what
    // they would), so they go now rather than stay resident beside it.
    for (auto it = kept_.begin(); it != kept_.end();) {
      if (it->bytes >= bytes / 2 && it->bytes < bytes) {
        release.push_back(it->ptr);
        kept_bytes_ -= it->bytes;
        it = kept_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (void* p : release) {
    upstream_.deallocate(p);
  }
  const size_t rounded = size_class(bytes);
  void* ptr = upstream_.allocate(rounded, alignment);
  if (ptr != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    large_[ptr] = Size{rounded, alignment};
  }
  return ptr;
}

void ReuseMemoryResource::deallocate(void* ptr) {
  if (ptr == nullptr) {
    return;
  }
  std::vector<void*> release;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = large_.find(ptr);
    if (it == large_.end()) {
      release.push_back(ptr);  // a small block
    } else {
      const Size size = it->second;
      large_.erase(it);
      if (size.bytes > capacity_) {
        release.push_back(ptr);
      } else {
        kept_.push_front(Kept{ptr, size.bytes, size.alignment});
        kept_bytes_ += size.bytes;
        while (kept_bytes_ > capacity_) {  // the oldest go first
          release.push_back(kept_.back().ptr);
          kept_bytes_ -= kept_.back().bytes;
          kept_.pop_back();
        }
      }
    }
  }
  for (void* p : release) {
    upstream_.deallocate(p);
  }
}

size_t ReuseMemoryResource::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kept_bytes_;
}

uint64_t ReuseMemoryResource::reuses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reuses_;
}

}  // namespace tessera
