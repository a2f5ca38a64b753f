// Tile configuration of cuda.flash, derived at compile time in one place.
// The kernel uses WMMA 16x16x16 tensor-core tiles: each warp owns 16 query
// rows; a CTA of kWarps warps owns kBlockM rows and walks the keys kBlockN at
// a time. Shared memory per CTA (bytes, HD = padded head dim, T = 2 bytes):
//   Q, K, V tiles   (kBlockM + 2 * kBlockN) * HD * 2
//   S (f32), P (T)  kWarps * 16 * kBlockN * (4 + 2)
//   O accumulators  kWarps * 16 * HD * 4
// HD 128: 104 KiB; HD 256 uses kBlockN 32: 140 KiB (fits sm_80's 163 KiB).
#pragma once

#include <cstddef>

namespace tessera::cuda_flash {

inline constexpr int kWmma = 16;
inline constexpr int kWarpSize = 32;
inline constexpr int kMaxHeadDim = 256;

template <int kHeadDim>
struct FlashTraits {
  static_assert(kHeadDim % kWmma == 0, "head dim tiles must be whole WMMA tiles");
  static_assert(kHeadDim <= kMaxHeadDim, "head dim above cuda.flash's maximum");
  static constexpr int kHD = kHeadDim;
  static constexpr int kWarps = 4;
  static constexpr int kThreads = kWarps * kWarpSize;
  static constexpr int kBlockM = kWarps * kWmma;
  static constexpr int kBlockN = kHeadDim <= 128 ? 64 : 32;
  static_assert(kBlockN % kWmma == 0 && kBlockN % 2 == 0, "key block must be whole tiles");
  // Two lanes share one of a warp's 16 rows in the softmax step.
  static_assert(kWarpSize == 2 * kWmma, "softmax step maps two lanes per row");

  static constexpr size_t kQBytes = size_t{kBlockM} * kHD * 2;
  static constexpr size_t kKBytes = size_t{kBlockN} * kHD * 2;
  static constexpr size_t kSBytes = size_t{kWarps} * kWmma * kBlockN * 4;
  static constexpr size_t kPBytes = size_t{kWarps} * kWmma * kBlockN * 2;
  static constexpr size_t kOBytes = size_t{kWarps} * kWmma * kHD * 4;
  static constexpr size_t kSmemBytes = kQBytes + 2 * kKBytes + kSBytes + kPBytes + kOBytes;
  static_assert(kSmemBytes <= size_t{163} * 1024, "tile set must fit sm_80 shared memory");
  // WMMA pointers must be 32-byte aligned: every region size is a multiple.
  static_assert(kQBytes % 128 == 0 && kKBytes % 128 == 0 && kSBytes % 128 == 0 &&
                    kPBytes % 128 == 0,
                "shared-memory regions must keep 128-byte alignment");
};

// The padded head dims compiled; a head dim D runs in the smallest >= D.
inline constexpr int kHeadDims[] = {32, 64, 128, 256};

}  // namespace tessera::cuda_flash
