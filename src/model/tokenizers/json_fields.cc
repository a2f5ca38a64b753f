#include "model/tokenizers/json_fields.h"

#include <limits>

#include "runtime/json_input.h"

namespace tessera::model::tokenizers {

Status JsonFields::error(const std::string& field, const std::string& problem) const {
  return invalid_argument(path_ + ": " + field + " " + problem);
}

Status JsonFields::unsupported_value(const std::string& field, const json& value,
                                     const std::string& supported) const {
  return unsupported(path_ + ": " + field + " is " + json_input::render(value) +
                     "; tessera supports " + supported);
}

Status JsonFields::unsupported_field(const std::string& field, const std::string& problem) const {
  return unsupported(path_ + ": " + field + " " + problem);
}

Status JsonFields::get_bool(const json& obj, const std::string& prefix, const char* key,
                            bool* out) const {
  const auto it = obj.find(key);
  if (it == obj.end()) return Status::Ok();
  if (!it->is_boolean()) {
    return error(prefix + key, "must be true or false, not " + json_input::render(*it));
  }
  *out = it->get<bool>();
  return Status::Ok();
}

Status JsonFields::get_string(const json& obj, const std::string& prefix, const char* key,
                              std::string* out) const {
  const auto it = obj.find(key);
  if (it == obj.end()) return Status::Ok();
  if (!it->is_string()) {
    return error(prefix + key, "must be a string, not " + json_input::render(*it));
  }
  *out = it->get<std::string>();
  return Status::Ok();
}

Status JsonFields::get_id(const json& value, const std::string& field, int32_t* out) const {
  if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
      value.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
    return error(field,
                 "must be a token id (an integer in [0, 2^31)), not " + json_input::render(value));
  }
  *out = static_cast<int32_t>(value.get<int64_t>());
  return Status::Ok();
}

std::string JsonFields::type_of(const json& value) {
  if (!value.is_object()) return "";
  const auto it = value.find("type");
  return it != value.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace tessera::model::tokenizers
