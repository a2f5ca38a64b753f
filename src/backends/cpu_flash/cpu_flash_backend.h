// cpu.flash: FlashAttention-2 forward on the CPU. Q/K/V tiles sized to L1/L2,
// online softmax (never an Sq x Sk buffer), Highway SIMD with run-time
// dispatch, threads over (batch, KV-head group, query block), split-K for
// decode. The whole attention contract: masks, bias, varlen, softcap, lse,
// GQA/MQA, any strides, f32/bf16/f16 with f32 accumulation.
#pragma once

#include <memory>

#include "tessera/backend.h"

namespace tessera {

std::unique_ptr<Backend> make_cpu_flash_backend();

}  // namespace tessera
