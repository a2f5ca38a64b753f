#include "runtime/gemm.h"

#include <dnnl.h>
#include <omp.h>

#include "runtime/cpu_features.h"

namespace tessera {

namespace {
Status from_dnnl(dnnl_status_t st, const char* what, int64_t m, int64_t n, int64_t k) {
  if (st == dnnl_success) return Status::Ok();
  return internal_error(std::string(what) + " failed (oneDNN status " + std::to_string(st) +
                        ") for M = " + std::to_string(m) + ", N = " + std::to_string(n) +
                        ", K = " + std::to_string(k));
}
}  // namespace

Status sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
             const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
             int64_t ldc) {
  (void)cpu_features();  // TESSERA_CPU_CAP caps oneDNN's ISA before its first use
  return from_dnnl(dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b,
                              ldb, beta, c, ldc),
                   "sgemm", m, n, k);
}

void set_gemm_threads(int threads) { omp_set_num_threads(threads < 1 ? 1 : threads); }

int gemm_threads() { return omp_get_max_threads(); }

std::string gemm_library_version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch);
}

}  // namespace tessera
