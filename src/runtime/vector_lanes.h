// GCC vector-extension types for runtime's hand-vectorised passes (gelu.cc,
// bf16_rows.cc), each compiled for AVX-512 and AVX2 by target attribute, and
// the checks (runtime/cpu_features.h) that pick the copy. Internal to runtime/.
#pragma once

#include <cstdint>

#include "runtime/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define TESSERA_VECTOR_LANES 1

namespace tessera::lanes {

using F32x16 = float __attribute__((vector_size(64)));
using U32x16 = uint32_t __attribute__((vector_size(64)));
using U16x16 = uint16_t __attribute__((vector_size(32)));
using F32x8 = float __attribute__((vector_size(32)));
using U32x8 = uint32_t __attribute__((vector_size(32)));
using U16x8 = uint16_t __attribute__((vector_size(16)));

// The copies compiled with target("avx512f,avx512bw") may run.
inline bool cpu_has_avx512() { return cpu_features().avx512; }
// The copies compiled with target("avx2,fma") may run.
inline bool cpu_has_avx2() { return cpu_features().avx2_fma; }

}  // namespace tessera::lanes
#endif
