#include "model/weight_precision.h"

#include <cstdlib>

namespace tessera::model {

const char* weight_precision_name(WeightPrecision p) {
  return p == WeightPrecision::kBf16 ? "bf16" : "f32";
}

Status resolve_weight_precision(const std::string& flag_value, WeightPrecision* out) {
  std::string value = flag_value;
  std::string source = "--weights";
  if (value.empty()) {
    const char* env = std::getenv("TESSERA_WEIGHTS");
    if (env == nullptr || *env == '\0') {
      *out = WeightPrecision::kF32;
      return Status::Ok();
    }
    value = env;
    source = "TESSERA_WEIGHTS";
  }
  if (value == "f32") {
    *out = WeightPrecision::kF32;
  } else if (value == "bf16") {
    *out = WeightPrecision::kBf16;
  } else {
    return invalid_argument(source + ": '" + value +
                            "' is not a weight precision; expected f32 or bf16");
  }
  return Status::Ok();
}

}  // namespace tessera::model
