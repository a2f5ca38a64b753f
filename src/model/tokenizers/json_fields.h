// Reading tokenizer.json fields: a missing or mistyped field becomes an error
// that names the file and the field's JSON path ("normalizer.normalizers[1].type").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "tessera/status.h"

namespace tessera::model::tokenizers {

class JsonFields {
 public:
  using json = nlohmann::json;
  explicit JsonFields(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

  // InvalidArgument "<path>: <field> <problem>".
  Status error(const std::string& field, const std::string& problem) const;
  // Unsupported "<path>: <field> is <value>; tessera supports <supported>".
  Status unsupported_value(const std::string& field, const json& value,
                           const std::string& supported) const;
  Status unsupported_field(const std::string& field, const std::string& problem) const;

  // Each keeps *out when `key` is absent (the default) and fails on a wrong type.
  Status get_bool(const json& obj, const std::string& prefix, const char* key, bool* out) const;
  Status get_string(const json& obj, const std::string& prefix, const char* key,
                    std::string* out) const;
  Status get_id(const json& value, const std::string& field, int32_t* out) const;
  // obj[key]["type"] as a string ("" when obj[key] is absent or null).
  static std::string type_of(const json& value);

 private:
  std::string path_;
};

}  // namespace tessera::model::tokenizers
