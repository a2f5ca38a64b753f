// The tracking allocator: every workspace and tensor allocation in tessera goes
// through one of these, so live/peak bytes per owner, budgets and leaks are
// visible in one place (the lesson of the 40%-over-budget leak).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tessera/status.h"

namespace tessera {

struct OwnerStats {
  size_t live_bytes = 0;
  size_t peak_bytes = 0;
  uint64_t allocations = 0;
};

struct LeakRecord {
  std::string owner;
  size_t bytes = 0;
};

// Where a TrackingAllocator's bytes come from: host memory by default, device
// memory for a CUDA allocator. The accounting (live, peak, owners, budget,
// leaks) is the same whatever the resource.
class MemoryResource {
 public:
  virtual ~MemoryResource() = default;
  // nullptr on failure.
  virtual void* allocate(size_t bytes, size_t alignment) = 0;
  virtual void deallocate(void* ptr) = 0;
};
MemoryResource& host_memory_resource();

class TrackingAllocator {
 public:
  static constexpr size_t kAlignment = 64;  // one cache line; every SIMD width

  // `budget` caps live bytes; an allocation past it is refused before any
  // memory is taken.
  explicit TrackingAllocator(std::optional<size_t> budget = std::nullopt,
                             MemoryResource* resource = nullptr /* host */);
  TrackingAllocator(const TrackingAllocator&) = delete;
  TrackingAllocator& operator=(const TrackingAllocator&) = delete;
  // Outstanding blocks are leaks (see leaks()); they are freed here.
  ~TrackingAllocator();

  // Allocates `bytes` (aligned to kAlignment) on behalf of `owner`
  // ("cpu.flash", "model.weights"...). On refusal *out is nullptr.
  Status allocate(size_t bytes, std::string_view owner, void** out);
  void deallocate(void* ptr);

  // Counts `bytes` held outside this allocator on behalf of `owner` (an HTTP
  // answer that a library must own as a std::string) against the budget,
  // exactly like an allocation, without allocating. Undone by release().
  Status reserve(size_t bytes, std::string_view owner);
  void release(size_t bytes, std::string_view owner);

  void set_budget(std::optional<size_t> budget);
  std::optional<size_t> budget() const;
  size_t live_bytes() const;
  size_t peak_bytes() const;
  void reset_peak();
  std::map<std::string, OwnerStats> by_owner() const;
  // Blocks still live, grouped by owner.
  std::vector<LeakRecord> leaks() const;

 private:
  struct Block {
    size_t bytes;
    std::string owner;
  };
  // With mu_ held: counts `bytes` as live if the budget allows (`asked`, as
  // the caller gave it, for the message), then their owner and the peaks.
  Status take_locked(size_t bytes, size_t asked, std::string_view owner);
  void count_locked(size_t bytes, std::string_view owner);
  mutable std::mutex mu_;
  MemoryResource* resource_;
  std::optional<size_t> budget_;
  size_t live_ = 0;
  size_t peak_ = 0;
  std::unordered_map<void*, Block> blocks_;
  std::map<std::string, OwnerStats, std::less<>> owners_;
};

// An owning, move-only handle to one tracked allocation; frees on destruction.
class Buffer {
 public:
  Buffer() = default;
  static Status allocate(TrackingAllocator& alloc, size_t bytes, std::string_view owner,
                         Buffer* out);
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  size_t bytes() const { return bytes_; }
  void reset();

 private:
  TrackingAllocator* alloc_ = nullptr;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// An owning, move-only handle to one reservation (TrackingAllocator::
// reserve); grows in place and releases on destruction.
class Reservation {
 public:
  Reservation() = default;
  Reservation(TrackingAllocator& alloc, std::string_view owner) : alloc_(&alloc), owner_(owner) {}
  Reservation(Reservation&& other) noexcept;
  Reservation& operator=(Reservation&& other) noexcept;
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  ~Reservation() { reset(); }

  // Reserves `bytes` more; on refusal nothing changes.
  Status grow(size_t bytes);
  size_t bytes() const { return bytes_; }
  void reset();

 private:
  TrackingAllocator* alloc_ = nullptr;
  std::string owner_;
  size_t bytes_ = 0;
};

}  // namespace tessera
