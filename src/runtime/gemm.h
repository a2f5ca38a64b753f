// The one door to the GEMM library (oneDNN 2.x; see docs/DECISIONS.md). Every
// matrix product in tessera outside the hand-written attention kernels goes
// through here, so a library change touches this file only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tessera/allocator.h"
#include "tessera/dtype.h"
#include "tessera/status.h"
#include "tessera/thread_pool.h"

namespace tessera {

// C[M,N] = alpha * op(A) * op(B) + beta * C; row-major, leading dimensions in
// elements; op(X) = X^T when trans_x. Runs on the calling thread plus the
// library's own threads (see set_gemm_threads).
Status sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
             const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
             int64_t ldc);

// A Linear layer's weight W [n, k] (PyTorch layout), converted once into the
// layout the library's matmul kernel prefers (blocked for its registers, AMX
// tiles for bf16 on CPUs that have them) in tracked memory owned by `owner`.
// f32 keeps the values; bf16 rounds them (nearest even); int8 keeps one f32
// scale per output channel (row of W: absmax / 127, symmetric) and the values
// rounded to s8, in a Walsh-Hadamard-rotated basis, and linear() quantizes
// each row of x (rotated alike) to u8 per call with its own scale and zero
// point (gemm_int8.cc). For linear(); move-only.
enum class WeightType { kF32, kBf16, kInt8 };

class PackedWeights {
 public:
  // Fails (Unsupported) for bf16 when the library has no bf16 matrix kernel
  // for this CPU, i.e. it would run its reference loops; for int8 where the
  // CPU has no int8 dot product (int8_refusal).
  static Status create(const float* w, int64_t n, int64_t k, WeightType type,
                       TrackingAllocator& alloc, std::string_view owner, PackedWeights* out);
  PackedWeights();
  PackedWeights(PackedWeights&&) noexcept;
  PackedWeights& operator=(PackedWeights&&) noexcept;
  ~PackedWeights();

  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  WeightType type() const { return type_; }
  size_t bytes() const { return data_.bytes() + channels_.bytes(); }
  bool empty() const { return data_.data() == nullptr; }
  // The values back in W's plain [n, k] f32 layout (bf16: the rounded ones;
  // int8: the quantized ones times their channel's scale).
  Status unpack(float* w) const;

  struct Plan;  // the library's primitives for one product shape (cached)

 private:
  friend class LinearPlanner;
  friend class Int8Linear;
  struct Layout;  // the library's description of data_
  Buffer data_;
  Buffer channels_;  // int8: per output channel, f32 scale [n] then the s8 row sums [n] (s32)
  std::unique_ptr<Layout> layout_;
  int64_t n_ = 0, k_ = 0;
  WeightType type_ = WeightType::kF32;
};

// What linear() does to each output element inside the library's kernel,
// while the tile is still in registers (no extra pass over y):
//   y = gelu?(x W^T + bias) (+ y, with accumulate)
struct LinearEpilogue {
  const float* bias = nullptr;  // [n], or none
  bool gelu = false;            // exact-erf GELU, after the bias
  bool accumulate = false;      // add to y's old values (a residual) instead of overwriting
};

// The element types of linear()'s activations. f32 in and out is the default;
// with bf16 or int8 weights x and y may also be bf16 (dense, row-major), so
// that a chain of bf16 stages never widens its activations to f32 in memory
// (products still accumulate in f32, or s32 for int8; a bf16 y is rounded
// once, after the epilogue). bf16 activations with f32 weights are refused.
struct LinearTypes {
  DType x = DType::kF32;
  DType y = DType::kF32;
};

// y[m, n] = epilogue(x[m, k] W^T); x and y dense f32 row-major (oneDNN 2.6's
// fast kernels take no row padding: with it, they fall back to reference
// loops 100x slower, so the interface does not offer it). With bf16 weights an f32 x is rounded to
// bf16 per call (into `workspace`); products accumulate in f32 either way. The rows are split into
// one piece per thread of `pool`, each a single-threaded library call: the library starts no
// threads of its own, so nothing competes with the pool (see docs/DECISIONS.md). The caller owns
// the workspace (tracked memory, reused across calls: a fresh block per call cost as much in page
// faults as the bf16 conversion itself). With int8 weights each piece goes 64 rows at a time: the
// rows quantized to u8 into the workspace, an s8 product with s32 sums, then one pass that scales,
// adds the bias, applies GELU and accumulates (gemm_int8.cc). Not reentrant on `pool` (it runs
// parallel_for).
Status linear(ThreadPool& pool, int64_t m, const float* x, const PackedWeights& w,
              const LinearEpilogue& epilogue, float* y, void* workspace, size_t workspace_bytes);
// The same with x and y of `types` (see LinearTypes).
Status linear(ThreadPool& pool, int64_t m, LinearTypes types, const void* x, const PackedWeights& w,
              const LinearEpilogue& epilogue, void* y, void* workspace, size_t workspace_bytes);
// The workspace bytes that call needs on a pool of `threads` (64-byte
// aligned, like every Buffer).
Status linear_workspace_bytes(int threads, int64_t m, const PackedWeights& w,
                              const LinearEpilogue& epilogue, size_t* out,
                              LinearTypes types = LinearTypes{});

// The library's kernel for products with `type` weights on this CPU, e.g.
// "brg:avx512_core" (f32), "brg:avx512_core_amx_bf16" or
// "brg:avx512_core_vnni" (int8: u8 x s8 -> s32); "ref:any" for its
// reference loops; "none" where it has no kernel at all.
// With `types`, the kernel of products with those activation types.
std::string linear_kernel(WeightType type, LinearTypes types = LinearTypes{});

// The int8 dot-product instructions a CPU has and the library may use (any
// one of them runs int8 weights at speed; without, the library's int8
// kernels multiply in 16-bit steps that saturate, or run reference loops).
struct Int8Isa {
  bool amx_int8 = false;
  bool avx512_vnni = false;
  bool avx_vnni = false;
  static Int8Isa of_this_cpu();
};
// Why int8 weights cannot run on a CPU with `isa` whose library int8 matmul
// kernel is `kernel` (linear_kernel(WeightType::kInt8)); "" when they can.
// The message names the missing instructions or the reference kernel.
std::string int8_refusal(const Int8Isa& isa, const std::string& kernel);

// Threads the library may use for one call from this thread (OpenMP ICV:
// per calling thread). 1 inside our own parallel loops.
void set_gemm_threads(int threads);
int gemm_threads();  // the current thread's setting

// Sets the calling thread's GEMM threads for a scope and restores the old
// value, so a backend's choice does not leak into its caller's later GEMMs.
class ScopedGemmThreads {
 public:
  explicit ScopedGemmThreads(int threads) : saved_(gemm_threads()) { set_gemm_threads(threads); }
  ScopedGemmThreads(const ScopedGemmThreads&) = delete;
  ScopedGemmThreads& operator=(const ScopedGemmThreads&) = delete;
  ~ScopedGemmThreads() { set_gemm_threads(saved_); }

 private:
  int saved_;
};

std::string gemm_library_version();  // "oneDNN 2.6.3"

}  // namespace tessera
