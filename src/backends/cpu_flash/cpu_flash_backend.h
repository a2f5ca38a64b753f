// cpu.flash: FlashAttention-2 forward on the CPU. Q/K/V tiles sized to L1/L2,
// online softmax (never an Sq x Sk buffer), Highway SIMD with run-time
// dispatch, threads over (batch, KV-head group, query block), split-K for
// decode. The whole attention contract: masks, bias, varlen, softcap, lse,
// GQA/MQA, any strides, f32/bf16/f16 with f32 accumulation.
#pragma once

#include <memory>
#include <vector>

#include "tessera/backend.h"

namespace tessera {

// cpu.flash: its product path per problem from the measured table for this
// CPU's kind (cpu_flash/product_paths.h).
std::unique_ptr<Backend> make_cpu_flash_backend();

// The same kernel with the product path forced, so the dispatcher, explain,
// tune and the conformance suite see each path: cpu.flash:f32 (every
// problem cpu.flash runs), cpu.flash:bf16dot (bf16, D even) and cpu.flash:amx
// (bf16, D % 32 == 0). Unavailable where the CPU lacks the path; below every
// other CPU backend in priority, so only a policy, a tuned table or a name
// chooses them.
std::vector<std::unique_ptr<Backend>> make_cpu_flash_variants();

}  // namespace tessera
