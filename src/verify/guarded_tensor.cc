#include "verify/guarded_tensor.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace tessera::verify {

namespace {

std::string hex_byte(uint8_t b) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02X", b);
  return text;
}

}  // namespace

std::array<int64_t, kMaxRank> padded_strides(int rank, const std::array<int64_t, kMaxRank>& shape,
                                             const std::array<int, kMaxRank>& order, int64_t pad) {
  std::array<int64_t, kMaxRank> strides{};
  int64_t stride = 1;
  for (int k = rank - 1; k >= 0; --k) {
    const int d = order[k];
    strides[d] = stride;
    stride = stride * std::max<int64_t>(shape[d], 1) + pad;
  }
  return strides;
}

Status GuardedTensor::create(TrackingAllocator& alloc, std::string_view owner, DType dtype,
                             int rank, const std::array<int64_t, kMaxRank>& shape,
                             const std::array<int64_t, kMaxRank>& strides, uint8_t fill,
                             GuardedTensor* out) {
  GuardedTensor t;
  t.fill_ = fill;
  t.view_.dtype = dtype;
  t.view_.rank = rank;
  t.view_.shape = shape;
  t.view_.strides = strides;
  for (int d = 0; d < kMaxRank; ++d) t.by_stride_[d] = d;
  std::stable_sort(t.by_stride_.begin(), t.by_stride_.begin() + rank,
                   [&](int a, int b) { return strides[a] > strides[b]; });
  // Nested strides (each at least the extent of the dims inside it) keep the
  // view free of overlap and let in_view() decompose an offset greedily.
  int64_t inner_extent = 1;
  for (int k = rank - 1; k >= 0; --k) {
    const int d = t.by_stride_[k];
    if (shape[d] <= 1) continue;
    if (strides[d] < inner_extent) {
      return invalid_argument(
          "guarded tensor: strides[" + std::to_string(d) + "] = " + std::to_string(strides[d]) +
          " overlaps the inner dims (extent " + std::to_string(inner_extent) + ")");
    }
    inner_extent = strides[d] * shape[d];
  }
  int64_t span = 1;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] == 0) span = 0;
  }
  if (span > 0) {
    for (int d = 0; d < rank; ++d) span += (shape[d] - 1) * strides[d];
  }
  t.region_elems_ = span;  // past its end, the guard band catches writes
  const size_t esize = dtype_size(dtype);
  const size_t bytes = 2 * kGuardBytes + static_cast<size_t>(t.region_elems_) * esize;
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(alloc, bytes, owner, &t.buffer_));
  std::memset(t.buffer_.data(), fill, bytes);
  t.view_.data = t.buffer_.as<uint8_t>() + kGuardBytes;
  *out = std::move(t);
  return Status::Ok();
}

void GuardedTensor::fill_view(uint8_t byte) {
  const size_t esize = dtype_size(view_.dtype);
  auto* base = static_cast<uint8_t*>(view_.data);
  for_each_element([&](int64_t, int64_t offset) {
    std::memset(base + static_cast<size_t>(offset) * esize, byte, esize);
  });
}

bool GuardedTensor::in_view(int64_t offset) const {
  for (int k = 0; k < view_.rank; ++k) {
    const int d = by_stride_[k];
    if (view_.shape[d] <= 1 || view_.strides[d] == 0) continue;
    const int64_t i = offset / view_.strides[d];
    if (i >= view_.shape[d]) return false;
    offset -= i * view_.strides[d];
  }
  return offset == 0;
}

Status GuardedTensor::check_fill(std::string_view field) const {
  const auto* bytes = buffer_.as<const uint8_t>();
  const size_t esize = dtype_size(view_.dtype);
  const size_t region_bytes = static_cast<size_t>(region_elems_) * esize;
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (bytes[i] != fill_) {
      return internal_error(std::string(field) + ": guard band before the view overwritten, " +
                            std::to_string(kGuardBytes - i) + " bytes before data: " +
                            hex_byte(bytes[i]) + " (want " + hex_byte(fill_) + ")");
    }
    const size_t after = kGuardBytes + region_bytes + i;
    if (bytes[after] != fill_) {
      return internal_error(std::string(field) + ": guard band after the view overwritten, " +
                            std::to_string(region_bytes + i) + " bytes after data: " +
                            hex_byte(bytes[after]) + " (want " + hex_byte(fill_) + ")");
    }
  }
  const uint8_t* region = bytes + kGuardBytes;
  for (int64_t e = 0; e < region_elems_; ++e) {
    if (in_view(e)) continue;
    for (size_t b = 0; b < esize; ++b) {
      const uint8_t got = region[static_cast<size_t>(e) * esize + b];
      if (got != fill_) {
        return internal_error(std::string(field) + ": stride gap at element offset " +
                              std::to_string(e) + " overwritten: " + hex_byte(got) + " (want " +
                              hex_byte(fill_) + "); view " + view_.describe());
      }
    }
  }
  return Status::Ok();
}

Status GuardedTensor::check_view_holds(std::string_view field, uint8_t byte) const {
  const size_t esize = dtype_size(view_.dtype);
  const auto* base = static_cast<const uint8_t*>(view_.data);
  Status status;
  for_each_element([&](int64_t logical, int64_t offset) {
    if (!status.ok()) return;
    for (size_t b = 0; b < esize; ++b) {
      const uint8_t got = base[static_cast<size_t>(offset) * esize + b];
      if (got != byte) {
        status = internal_error(std::string(field) + " was written: element " +
                                std::to_string(logical) + " holds " + hex_byte(got) + " (want " +
                                hex_byte(byte) + " left from before the call)");
        return;
      }
    }
  });
  return status;
}

}  // namespace tessera::verify
