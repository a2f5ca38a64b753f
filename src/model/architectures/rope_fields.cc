#include "model/architectures/rope_fields.h"

#include "model/config_fields.h"
#include "runtime/json_input.h"

namespace tessera::model {

Status read_rope_object(const nlohmann::json& object, const std::string& path,
                        const std::string& field, LayerAttention* a) {
  if (!object.is_object()) {
    return invalid_argument(path + ": field '" + field + "' = " + json_input::render(object) +
                            " must be an object");
  }
  const std::string where = path + " (" + field + ")";
  std::string type = "default";
  TESSERA_RETURN_IF_ERROR(config_fields::get_string(object, where, "rope_type|type", &type));
  TESSERA_RETURN_IF_ERROR(config_fields::get_positive(object, where, "rope_theta", &a->rope_theta));
  if (type == "default") {
    a->rope_linear_factor = 1.0f;
  } else if (type == "linear") {
    a->rope_linear_factor = 0.0f;
    TESSERA_RETURN_IF_ERROR(
        config_fields::get_positive(object, where, "factor", &a->rope_linear_factor));
    if (a->rope_linear_factor == 0.0f) {
      return invalid_argument(where + ": rope_type \"linear\" needs a 'factor'");
    }
  } else {
    return unsupported(where + ": rope_type \"" + json_input::clip(type) +
                       "\" is not supported; supported: \"default\", \"linear\"");
  }
  return Status::Ok();
}

Status read_rope(const nlohmann::json& j, const std::string& path, const char* theta_keys,
                 LayerAttention* a) {
  const auto params = j.find("rope_parameters");
  if (params != j.end() && !params->is_null()) {
    return read_rope_object(*params, path, "rope_parameters", a);
  }
  TESSERA_RETURN_IF_ERROR(config_fields::get_positive(j, path, theta_keys, &a->rope_theta));
  const auto scaling = j.find("rope_scaling");
  if (scaling != j.end() && !scaling->is_null()) {
    const float theta = a->rope_theta;
    TESSERA_RETURN_IF_ERROR(read_rope_object(*scaling, path, "rope_scaling", a));
    a->rope_theta = theta;  // rope_scaling holds no base
  }
  return Status::Ok();
}

}  // namespace tessera::model
