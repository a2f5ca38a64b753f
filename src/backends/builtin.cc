// The one place that lists the backends compiled into this build. Adding a
// backend is its folder plus one line here.
#include "cpu_flash/cpu_flash_backend.h"
#include "cpu_gemm/cpu_gemm_backend.h"
#include "reference/reference_backend.h"
#include "tessera/registry.h"

#if TESSERA_HAVE_CUDA
#include "cuda_flash/cuda_flash_backend.h"
#include "cuda_vendor/cuda_vendor_backend.h"
#endif

namespace tessera {

void register_builtin_backends(Registry& registry) {
  // add() fails only on duplicate names, which a fresh registry cannot have.
  (void)registry.add(make_reference_backend());
  (void)registry.add(make_cpu_gemm_backend());
  (void)registry.add(make_cpu_flash_backend());
#if TESSERA_HAVE_CUDA
  // Registered even without a GPU: availability() says why they cannot run.
  (void)registry.add(make_cuda_flash_backend());
  (void)registry.add(make_cuda_vendor_backend());
#endif
}

}  // namespace tessera
