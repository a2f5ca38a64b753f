// How the encoder stores its Linear weights: f32 (exact, the default), bf16
// (half the memory; products on the CPU's bf16 matrix units, AMX or
// AVX512_BF16, with f32 accumulation) or int8 (a quarter; per-channel weight
// scales, each token quantized per product, s32 accumulation on AMX-INT8 /
// AVX512_VNNI / AVX-VNNI: runtime/gemm.h). Chosen by the weights option (the
// edges fall back to $TESSERA_WEIGHTS: api/environment.h).
#pragma once

#include <string>

#include "tessera/status.h"

namespace tessera::model {

enum class WeightPrecision { kF32, kBf16, kInt8 };

const char* weight_precision_name(WeightPrecision p);  // "f32", "bf16", "int8"

// "f32", "bf16" or "int8" ("": f32). Anything else is an error naming `source` (the
// option "weights", or the variable it came from) and the value.
Status parse_weight_precision(const std::string& value, const std::string& source,
                              WeightPrecision* out);

}  // namespace tessera::model
