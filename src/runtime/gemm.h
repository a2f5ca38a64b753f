// The one door to the GEMM library (oneDNN 2.x; see docs/DECISIONS.md). Every
// matrix product in tessera outside the hand-written attention kernels goes
// through here, so a library change touches this file only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tessera/allocator.h"
#include "tessera/status.h"

namespace tessera {

// C[M,N] = alpha * op(A) * op(B) + beta * C; row-major, leading dimensions in
// elements; op(X) = X^T when trans_x. Runs on the calling thread plus the
// library's own threads (see set_gemm_threads).
Status sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
             const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
             int64_t ldc);

// A Linear layer's weight W [n, k] (PyTorch layout), rounded once to bf16
// (nearest even) and stored in the layout the library's bf16 matmul prefers
// (AMX tiles on CPUs that have them), in tracked memory owned by `owner`.
// For gemm_bf16_weights; move-only.
class Bf16Weights {
 public:
  // Fails (Unsupported) when the library has no bf16 matrix kernel for this
  // CPU, i.e. it would run its reference loops.
  static Status create(const float* w, int64_t n, int64_t k, TrackingAllocator& alloc,
                       std::string_view owner, Bf16Weights* out);
  Bf16Weights();
  Bf16Weights(Bf16Weights&&) noexcept;
  Bf16Weights& operator=(Bf16Weights&&) noexcept;
  ~Bf16Weights();

  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  size_t bytes() const { return data_.bytes(); }
  bool empty() const { return data_.data() == nullptr; }

  struct Plan;  // the library's primitives for one product shape (cached)

 private:
  friend Status gemm_bf16_workspace_bytes(int64_t, int64_t, const Bf16Weights&, int64_t, size_t*);
  friend Status gemm_bf16_weights(int64_t, const float*, int64_t, const Bf16Weights&, float*,
                                  int64_t, void*, size_t);
  Status plan(int64_t m, int64_t ldx, int64_t ldy, std::shared_ptr<const Plan>* out) const;
  struct Layout;  // the library's description of data_
  Buffer data_;
  std::unique_ptr<Layout> layout_;
  int64_t n_ = 0, k_ = 0;
};

// y[m, n] = x[m, k] W^T with W in bf16: x (f32, row stride ldx) is rounded to
// bf16 per call by the library into `workspace` (which also holds the
// library's scratchpad); products accumulate in f32; y is f32 (row stride
// ldy). Threads as sgemm does (set_gemm_threads). The caller owns the
// workspace (tracked memory, reused across calls: a fresh block per call cost
// as much in page faults as the conversion itself).
Status gemm_bf16_weights(int64_t m, const float* x, int64_t ldx, const Bf16Weights& w, float* y,
                         int64_t ldy, void* workspace, size_t workspace_bytes);
// The workspace bytes that call needs (64-byte aligned, like every Buffer).
Status gemm_bf16_workspace_bytes(int64_t m, int64_t ldx, const Bf16Weights& w, int64_t ldy,
                                 size_t* out);

// The library's kernel for bf16 products on this CPU, e.g.
// "brg:avx512_core_amx_bf16"; "ref:any" where it has none.
std::string bf16_gemm_kernel();

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
