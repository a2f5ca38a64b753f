// The one door to the GEMM library (oneDNN 2.x; see docs/DECISIONS.md). Every
// matrix product in tessera outside the hand-written attention kernels goes
// through here, so a library change touches this file only.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/status.h"

namespace tessera {

// C[M,N] = alpha * op(A) * op(B) + beta * C; row-major, leading dimensions in
// elements; op(X) = X^T when trans_x. Runs on the calling thread plus the
// library's own threads (see set_gemm_threads).
Status sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
             const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
             int64_t ldc);

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
