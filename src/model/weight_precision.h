// How the encoder stores its Linear weights: f32 (exact, the default) or bf16
// (half the memory; products on the CPU's bf16 matrix units, AMX or
// AVX512_BF16, with f32 accumulation). Chosen by --weights or TESSERA_WEIGHTS.
#pragma once

#include <string>

#include "tessera/status.h"

namespace tessera::model {

enum class WeightPrecision { kF32, kBf16 };

const char* weight_precision_name(WeightPrecision p);  // "f32", "bf16"

// The flag's value if not empty, else $TESSERA_WEIGHTS if set, else f32. A
// value other than f32 / bf16 is an error naming its source and the value.
Status resolve_weight_precision(const std::string& flag_value, WeightPrecision* out);

}  // namespace tessera::model
