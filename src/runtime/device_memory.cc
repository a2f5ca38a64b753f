#include "runtime/device_memory.h"

#include <map>
#include <mutex>
#include <utility>

namespace tessera {

namespace {

struct Registry {
  std::mutex mu;
  std::map<DeviceKind, DeviceMemory*> by_kind;
  std::map<std::pair<DeviceKind, int>, DeviceMemory*> installed;  // ScopedDeviceMemory
};

Registry& registry() {
  static Registry* r = new Registry;  // process lifetime: used from static init
  return *r;
}

}  // namespace

DeviceMemory* device_memory(Device device) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (auto it = r.installed.find({device.kind, device.index}); it != r.installed.end()) {
    return it->second;
  }
  auto it = r.by_kind.find(device.kind);
  return it == r.by_kind.end() ? nullptr : it->second;
}

void register_device_memory(DeviceKind kind, DeviceMemory* memory) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.by_kind[kind] = memory;
}

ScopedDeviceMemory::ScopedDeviceMemory(Device device, DeviceMemory* memory) : device_(device) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.installed[{device.kind, device.index}] = memory;
}

ScopedDeviceMemory::~ScopedDeviceMemory() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.installed.erase({device_.kind, device_.index});
}

}  // namespace tessera
