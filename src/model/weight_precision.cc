#include "model/weight_precision.h"

namespace tessera::model {

const char* weight_precision_name(WeightPrecision p) {
  switch (p) {
    case WeightPrecision::kBf16:
      return "bf16";
    case WeightPrecision::kInt8:
      return "int8";
    case WeightPrecision::kF32:
      break;
  }
  return "f32";
}

Status parse_weight_precision(const std::string& value, const std::string& source,
                              WeightPrecision* out) {
  if (value.empty() || value == "f32") {
    *out = WeightPrecision::kF32;
  } else if (value == "bf16") {
    *out = WeightPrecision::kBf16;
  } else if (value == "int8") {
    *out = WeightPrecision::kInt8;
  } else {
    return {StatusCode::kInvalidArgument,
            source + ": '" + value + "' is not a weight precision; expected f32, bf16 or int8",
            source == "weights" ? source : ""};
  }
  return Status::Ok();
}

}  // namespace tessera::model
