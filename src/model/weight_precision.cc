#include "model/weight_precision.h"

namespace tessera::model {

const char* weight_precision_name(WeightPrecision p) {
  return p == WeightPrecision::kBf16 ? "bf16" : "f32";
}

Status parse_weight_precision(const std::string& value, const std::string& source,
                              WeightPrecision* out) {
  if (value.empty() || value == "f32") {
    *out = WeightPrecision::kF32;
  } else if (value == "bf16") {
    *out = WeightPrecision::kBf16;
  } else {
    return {StatusCode::kInvalidArgument,
            source + ": '" + value + "' is not a weight precision; expected f32 or bf16",
            source == "weights" ? source : ""};
  }
  return Status::Ok();
}

}  // namespace tessera::model
