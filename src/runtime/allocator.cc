#include "tessera/allocator.h"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace tessera {

namespace {
class HostMemoryResource final : public MemoryResource {
 public:
  void* allocate(size_t bytes, size_t alignment) override {
    return std::aligned_alloc(alignment, bytes);
  }
  void deallocate(void* ptr) override { std::free(ptr); }
};
}  // namespace

MemoryResource& host_memory_resource() {
  static HostMemoryResource resource;
  return resource;
}

TrackingAllocator::TrackingAllocator(std::optional<size_t> budget, MemoryResource* resource)
    : resource_(resource != nullptr ? resource : &host_memory_resource()), budget_(budget) {}

// Outstanding blocks were leaks; Context reports them before this runs. They
// are returned to the system so one leak does not grow the process forever.
TrackingAllocator::~TrackingAllocator() {
  for (auto& [ptr, block] : blocks_) resource_->deallocate(ptr);
}

Status TrackingAllocator::allocate(size_t bytes, std::string_view owner, void** out) {
  *out = nullptr;
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  {
    // Taken before allocating so concurrent callers cannot both pass the check.
    std::lock_guard<std::mutex> lock(mu_);
    TESSERA_RETURN_IF_ERROR(take_locked(rounded, bytes, owner));
  }
  void* p = rounded == 0 ? nullptr : resource_->allocate(rounded, kAlignment);
  std::lock_guard<std::mutex> lock(mu_);
  if (rounded != 0 && p == nullptr) {
    live_ -= rounded;
    return resource_exhausted("out of memory: " + std::string(owner) + " asked for " +
                              std::to_string(bytes) + " bytes");
  }
  if (rounded == 0) return Status::Ok();
  blocks_.emplace(p, Block{rounded, std::string(owner)});
  count_locked(rounded, owner);
  *out = p;
  return Status::Ok();
}

Status TrackingAllocator::take_locked(size_t bytes, size_t asked, std::string_view owner) {
  if (budget_ && live_ + bytes > *budget_) {
    return resource_exhausted("memory budget: " + std::string(owner) + " asked for " +
                              std::to_string(asked) + " bytes with " + std::to_string(live_) +
                              " live of a " + std::to_string(*budget_) + "-byte budget");
  }
  live_ += bytes;
  return Status::Ok();
}

void TrackingAllocator::count_locked(size_t bytes, std::string_view owner) {
  peak_ = std::max(peak_, live_);
  auto it = owners_.find(owner);
  if (it == owners_.end()) it = owners_.emplace(std::string(owner), OwnerStats{}).first;
  it->second.live_bytes += bytes;
  it->second.peak_bytes = std::max(it->second.peak_bytes, it->second.live_bytes);
  ++it->second.allocations;
}

void TrackingAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end()) std::abort();  // not ours: a bug we must not hide
    live_ -= it->second.bytes;
    owners_.find(it->second.owner)->second.live_bytes -= it->second.bytes;
    blocks_.erase(it);
  }
  resource_->deallocate(ptr);
}

Status TrackingAllocator::reserve(size_t bytes, std::string_view owner) {
  std::lock_guard<std::mutex> lock(mu_);
  TESSERA_RETURN_IF_ERROR(take_locked(bytes, bytes, owner));
  count_locked(bytes, owner);
  return Status::Ok();
}

void TrackingAllocator::release(size_t bytes, std::string_view owner) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = owners_.find(owner);
  // Releasing more than was reserved is a bug we must not hide.
  if (it == owners_.end() || it->second.live_bytes < bytes || live_ < bytes) std::abort();
  it->second.live_bytes -= bytes;
  live_ -= bytes;
}

void TrackingAllocator::set_budget(std::optional<size_t> budget) {
  std::lock_guard<std::mutex> lock(mu_);
  budget_ = budget;
}
std::optional<size_t> TrackingAllocator::budget() const {
  std::lock_guard<std::mutex> lock(mu_);
  return budget_;
}
size_t TrackingAllocator::live_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_;
}
size_t TrackingAllocator::peak_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_;
}
void TrackingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  peak_ = live_;
  for (auto& [name, stats] : owners_) stats.peak_bytes = stats.live_bytes;
}
std::map<std::string, OwnerStats> TrackingAllocator::by_owner() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {owners_.begin(), owners_.end()};
}
std::vector<LeakRecord> TrackingAllocator::leaks() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LeakRecord> out;
  for (const auto& [name, stats] : owners_) {
    if (stats.live_bytes > 0) out.push_back({name, stats.live_bytes});
  }
  return out;
}

Status Buffer::allocate(TrackingAllocator& alloc, size_t bytes, std::string_view owner,
                        Buffer* out) {
  out->reset();
  void* p = nullptr;
  TESSERA_RETURN_IF_ERROR(alloc.allocate(bytes, owner, &p));
  out->alloc_ = &alloc;
  out->data_ = p;
  out->bytes_ = bytes;
  return Status::Ok();
}

Buffer::Buffer(Buffer&& other) noexcept
    : alloc_(other.alloc_), data_(other.data_), bytes_(other.bytes_) {
  other.alloc_ = nullptr;
  other.data_ = nullptr;
  other.bytes_ = 0;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    alloc_ = other.alloc_;
    data_ = other.data_;
    bytes_ = other.bytes_;
    other.alloc_ = nullptr;
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

Buffer::~Buffer() { reset(); }

void Buffer::reset() {
  if (alloc_ != nullptr) alloc_->deallocate(data_);
  alloc_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
}

Reservation::Reservation(Reservation&& other) noexcept
    : alloc_(other.alloc_), owner_(std::move(other.owner_)), bytes_(other.bytes_) {
  other.alloc_ = nullptr;
  other.bytes_ = 0;
}

Reservation& Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    reset();
    alloc_ = other.alloc_;
    owner_ = std::move(other.owner_);
    bytes_ = other.bytes_;
    other.alloc_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

Status Reservation::grow(size_t bytes) {
  if (alloc_ == nullptr) return internal_error("Reservation::grow on an empty reservation");
  TESSERA_RETURN_IF_ERROR(alloc_->reserve(bytes, owner_));
  bytes_ += bytes;
  return Status::Ok();
}

void Reservation::reset() {
  if (alloc_ != nullptr && bytes_ > 0) alloc_->release(bytes_, owner_);
  bytes_ = 0;
}

}  // namespace tessera
