// The one place that lists the backends compiled into this build. Adding a
// backend is its folder plus one line here.
#include "cpu_gemm/cpu_gemm_backend.h"
#include "reference/reference_backend.h"
#include "tessera/registry.h"

namespace tessera {

void register_builtin_backends(Registry& registry) {
  // add() fails only on duplicate names, which a fresh registry cannot have.
  (void)registry.add(make_reference_backend());
  (void)registry.add(make_cpu_gemm_backend());
}

}  // namespace tessera
