// cpu.flash: the SIMD kernel's entry, dispatched once per call to the best
// Highway target this CPU supports (AVX-512, AVX2, SSE4, NEON, SVE, scalar).
#pragma once

#include "cpu_flash/flash_params.h"
#include "tessera/thread_pool.h"

namespace tessera::cpu_flash {

// Computes out (and lse) for `p` on `pool`. `workspace` holds
// workspace_bytes(p, pool.num_threads()) bytes, 64-byte aligned.
void flash_forward(const FlashParams& p, ThreadPool& pool, float* workspace);

// Name of the Highway target flash_forward runs on ("AVX2", "AVX3", ...).
const char* flash_target_name();

}  // namespace tessera::cpu_flash
