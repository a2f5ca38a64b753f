// A fake device for the staging tests (no GPU needed): host memory behind a
// device no machine has (cuda:61), with its own tracked allocator, installed
// through the test seam ScopedDeviceMemory. OnFakeDevice wraps a CPU backend
// as a backend of that device: it refuses tensors that were not staged onto
// the fake device, then runs the inner backend on them (they are host memory
// underneath), so every fault of a wrapped backend happens "on the device".
#pragma once

#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "runtime/device_memory.h"
#include "tessera/backend.h"

namespace tessera::testing {

inline constexpr Device kFakeDevice{DeviceKind::kCuda, 61};

class FakeDeviceMemory final : public DeviceMemory {
 public:
  explicit FakeDeviceMemory(Device device = kFakeDevice) : scoped_(device, this) {}

  bool present(Device /*device*/, std::string* why) const override {
    if (!plugged_in) *why = "the fake device is unplugged";
    return plugged_in;
  }
  TrackingAllocator& allocator(Device /*device*/, Context& /*ctx*/) override { return alloc_; }
  Status copy_to_device(Device /*device*/, void* dst, const void* src, size_t bytes,
                        Context& /*ctx*/) override {
    if (!owns(dst, bytes)) return internal_error("fake device: copy to memory it does not own");
    std::memcpy(dst, src, bytes);
    ++copies_to_device;
    return Status::Ok();
  }
  Status copy_to_host(Device /*device*/, void* dst, const void* src, size_t bytes,
                      Context& /*ctx*/) override {
    if (!owns(src, bytes)) return internal_error("fake device: copy from memory it does not own");
    std::memcpy(dst, src, bytes);
    ++copies_to_host;
    return Status::Ok();
  }
  // [p, p + bytes) lies inside one live allocation of this device.
  bool owns(const void* p, size_t bytes) const { return resource_.owns(p, bytes); }
  TrackingAllocator& allocator() { return alloc_; }

  bool plugged_in = true;
  int copies_to_device = 0;
  int copies_to_host = 0;

 private:
  // Host memory that remembers its blocks, so owns() can tell device memory.
  class Resource final : public MemoryResource {
   public:
    void* allocate(size_t bytes, size_t alignment) override {
      void* p = host_memory_resource().allocate(bytes, alignment);
      std::lock_guard<std::mutex> lock(mu_);
      if (p != nullptr) blocks_[static_cast<const char*>(p)] = bytes;
      return p;
    }
    void deallocate(void* ptr) override {
      {
        std::lock_guard<std::mutex> lock(mu_);
        blocks_.erase(static_cast<const char*>(ptr));
      }
      host_memory_resource().deallocate(ptr);
    }
    bool owns(const void* ptr, size_t bytes) const {
      const char* p = static_cast<const char*>(ptr);
      std::lock_guard<std::mutex> lock(mu_);
      auto it = blocks_.upper_bound(p);
      if (it == blocks_.begin()) return false;
      --it;
      return p + bytes <= it->first + it->second;
    }

   private:
    mutable std::mutex mu_;
    std::map<const char*, size_t> blocks_;
  };

  ScopedDeviceMemory scoped_;
  Resource resource_;  // before alloc_: outlives it
  TrackingAllocator alloc_{std::nullopt, &resource_};
};

// `inner` (a CPU backend) presented as a backend of the fake device.
class OnFakeDevice final : public Backend {
 public:
  enum class Fault { kNone, kLeaksDeviceMemory };
  OnFakeDevice(Backend& inner, FakeDeviceMemory& memory, Fault fault = Fault::kNone)
      : inner_(inner), memory_(memory), fault_(fault) {}
  std::string_view name() const override { return "test.fake_device"; }
  Device device() const override { return kFakeDevice; }
  int priority() const override { return 1; }
  const Capabilities& capabilities() const override { return inner_.capabilities(); }
  void check(const AttentionProblem& p, const Context& ctx, Reasons& why) const override {
    check_capabilities(capabilities(), device(), p, why);
    if (why.settled()) return;
    // The inner backend's own limits, asked about the same problem on the host.
    std::optional<AttentionProblem> host;
    if (AttentionProblem::make(on_host(p.args()), &host).ok()) inner_.check(*host, ctx, why);
  }
  Status run(const AttentionProblem& p, Context& ctx) override {
    const AttentionArgs& a = p.args();
    for (const TensorView* t : {&a.q, &a.k, &a.v, &a.bias, &a.out, &a.lse}) {
      if (t->present() && !memory_.owns(t->data, dtype_size(t->dtype))) {
        return internal_error("test.fake_device: a tensor not in fake device memory");
      }
    }
    if (fault_ == Fault::kLeaksDeviceMemory) {
      void* leaked = nullptr;
      TESSERA_RETURN_IF_ERROR(memory_.allocator().allocate(512, "test.fake_device", &leaked));
    }
    std::optional<AttentionProblem> host;
    TESSERA_RETURN_IF_ERROR(AttentionProblem::make(on_host(a), &host));
    return inner_.run(*host, ctx);
  }
  static AttentionArgs on_host(AttentionArgs a) {
    for (TensorView* t : {&a.q, &a.k, &a.v, &a.bias, &a.out, &a.lse}) t->device = Device::cpu();
    return a;
  }

 private:
  Backend& inner_;
  FakeDeviceMemory& memory_;
  Fault fault_;
};

}  // namespace tessera::testing
