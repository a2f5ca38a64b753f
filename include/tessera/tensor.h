// TensorView: a non-owning, strided view of device memory. Strides are in
// elements, so one view type describes BSHD, BHSD and packed (THD) layouts.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "tessera/dtype.h"

namespace tessera {

enum class DeviceKind : uint8_t { kCpu, kCuda };

struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;
  static Device cpu() { return {}; }
  static Device cuda(int i) { return {DeviceKind::kCuda, i}; }
  bool operator==(const Device&) const = default;
  std::string to_string() const;  // "cpu", "cuda:0"
};

inline constexpr int kMaxRank = 4;

struct TensorView {
  void* data = nullptr;
  DType dtype = DType::kF32;
  Device device{};
  int rank = 0;
  std::array<int64_t, kMaxRank> shape{};
  std::array<int64_t, kMaxRank> strides{};  // in elements; 0 = broadcast

  // A row-major view of `shape` over `data`.
  static TensorView contiguous(void* data, DType dtype, std::initializer_list<int64_t> shape,
                               Device device = Device::cpu());

  bool present() const { return rank > 0; }  // an optional field that was set
  int64_t numel() const;
  // Element offset (not bytes) of a full index.
  int64_t offset(std::initializer_list<int64_t> index) const;
  // "[2, 128, 8, 64] strides [65536, 512, 64, 1] bf16"
  std::string describe() const;
};

}  // namespace tessera
