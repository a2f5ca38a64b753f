// GuardedTensor: one tracked allocation holding a strided view, with guard
// bands before and after it and a fill byte in every stride gap, so a write
// out of bounds (or into a gap) is caught after the run, as ggml's
// test-backend-ops does with its guard bytes.
//
//   [ kGuardBytes of fill | region: view elements + gaps of fill | kGuardBytes of fill ]
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "tessera/allocator.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera::verify {

inline constexpr size_t kGuardBytes = 256;  // a multiple of 64: data stays aligned
// Outputs: guard bands and gaps hold kGuardByte; the view is poisoned with
// kPoisonByte before each run (f32 1.5e16, bf16 1.5e16, f16 203.25: finite,
// wrong, and no backend computes them by accident).
inline constexpr uint8_t kGuardByte = 0xA5;
inline constexpr uint8_t kPoisonByte = 0x5A;
// Inputs: gaps and guards hold 0xFF bytes, a NaN in every dtype, so a backend
// that reads outside its view produces NaN and fails the comparison.
inline constexpr uint8_t kInputFillByte = 0xFF;

// Strides of a rank-`rank` view of `shape` stored in the memory order `order`
// (outermost dimension first), with `pad` unused elements after every row at
// each level above the innermost. pad = 0 and order = 0..rank-1 is row-major.
std::array<int64_t, kMaxRank> padded_strides(int rank, const std::array<int64_t, kMaxRank>& shape,
                                             const std::array<int, kMaxRank>& order, int64_t pad);

class GuardedTensor {
 public:
  GuardedTensor() = default;
  // Allocates the guarded region for a view of `shape` with `strides` and
  // fills all of it (view included) with `fill`.
  static Status create(TrackingAllocator& alloc, std::string_view owner, DType dtype, int rank,
                       const std::array<int64_t, kMaxRank>& shape,
                       const std::array<int64_t, kMaxRank>& strides, uint8_t fill,
                       GuardedTensor* out);

  const TensorView& view() const { return view_; }
  bool present() const { return view_.present(); }
  // Calls fn(logical, memory) for every element of the view: `logical` counts
  // in row-major order of the shape, `memory` is the offset from view().data.
  template <typename Fn>
  void for_each_element(Fn&& fn) const;

  // Fills every element of the view with `byte`.
  void fill_view(uint8_t byte);
  // OK when every guard and gap byte still holds the fill; else names the
  // first overwritten byte ("out: guard band after the view, byte 3 = 0x00").
  Status check_fill(std::string_view field) const;
  // OK when every view byte still holds `byte` (an output left untouched).
  Status check_view_holds(std::string_view field, uint8_t byte) const;

 private:
  Buffer buffer_;
  TensorView view_;
  uint8_t fill_ = 0;
  int64_t region_elems_ = 0;
  std::array<int, kMaxRank> by_stride_{};  // dims, largest stride first

  // Is region element `offset` one of the view's? (strides are nested, so a
  // greedy division by the largest stride first recovers the index.)
  bool in_view(int64_t offset) const;
};

template <typename Fn>
void GuardedTensor::for_each_element(Fn&& fn) const {
  std::array<int64_t, kMaxRank> shape{1, 1, 1, 1};
  std::array<int64_t, kMaxRank> strides{0, 0, 0, 0};
  for (int d = 0; d < view_.rank; ++d) {
    shape[kMaxRank - view_.rank + d] = view_.shape[d];
    strides[kMaxRank - view_.rank + d] = view_.strides[d];
  }
  int64_t logical = 0;
  for (int64_t a = 0; a < shape[0]; ++a) {
    for (int64_t b = 0; b < shape[1]; ++b) {
      for (int64_t c = 0; c < shape[2]; ++c) {
        const int64_t row = a * strides[0] + b * strides[1] + c * strides[2];
        for (int64_t e = 0; e < shape[3]; ++e) fn(logical++, row + e * strides[3]);
      }
    }
  }
}

}  // namespace tessera::verify
