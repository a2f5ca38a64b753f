#include "model/config_fields.h"

#include <algorithm>
#include <string_view>

#include "runtime/json_input.h"

namespace tessera::model::config_fields {

using nlohmann::json;

namespace {

// `key` may list alternatives, "hidden_size|n_embd": the first present one
// is read (and named in errors); absent (or null), *name is the first.
json::const_iterator find_key(const json& j, const char* key, std::string* name) {
  const std::string_view all(key);
  size_t begin = 0;
  while (begin <= all.size()) {
    const size_t end = std::min(all.find('|', begin), all.size());
    const std::string one(all.substr(begin, end - begin));
    const auto it = j.find(one);
    if (it != j.end() && !it->is_null()) {
      *name = one;
      return it;
    }
    begin = end + 1;
  }
  *name = std::string(all.substr(0, all.find('|')));
  return j.end();
}

}  // namespace

Status read_object(const std::string& path, json* out) {
  TESSERA_RETURN_IF_ERROR(json_input::parse_file(path, out));
  if (!out->is_object()) return invalid_argument(path + ": expected a JSON object");
  return Status::Ok();
}

Status get_int(const json& j, const std::string& path, const char* key_list, bool required,
               int* out) {
  std::string key;
  const auto it = find_key(j, key_list, &key);
  if (it == j.end()) {
    return required ? invalid_argument(path + ": missing field '" + key + "'") : Status::Ok();
  }
  if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > (1 << 30)) {
    return invalid_argument(path + ": field '" + key + "' = " + json_input::render(*it) +
                            " must be a positive integer");
  }
  *out = it->get<int>();
  return Status::Ok();
}

Status get_index(const json& j, const std::string& path, const char* key_list, int* out) {
  std::string key;
  const auto it = find_key(j, key_list, &key);
  if (it == j.end()) return Status::Ok();
  if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > (1 << 30)) {
    return invalid_argument(path + ": field '" + key + "' = " + json_input::render(*it) +
                            " must be an integer >= 0");
  }
  *out = it->get<int>();
  return Status::Ok();
}

Status get_string(const json& j, const std::string& path, const char* key_list, std::string* out) {
  std::string key;
  const auto it = find_key(j, key_list, &key);
  if (it == j.end()) return Status::Ok();
  if (!it->is_string()) {
    return invalid_argument(path + ": field '" + key + "' = " + json_input::render(*it) +
                            " must be a string");
  }
  *out = it->get<std::string>();
  return Status::Ok();
}

Status get_bool(const json& j, const std::string& path, const char* key_list, bool* out) {
  std::string key;
  const auto it = find_key(j, key_list, &key);
  if (it == j.end()) return Status::Ok();
  if (!it->is_boolean()) {
    return invalid_argument(path + ": field '" + key + "' = " + json_input::render(*it) +
                            " must be a boolean");
  }
  *out = it->get<bool>();
  return Status::Ok();
}

Status get_epsilon(const json& j, const std::string& path, const char* key_list, float* out) {
  std::string key;
  const auto it = find_key(j, key_list, &key);
  if (it == j.end()) return Status::Ok();
  if (!it->is_number() || it->get<double>() <= 0 || it->get<double>() > 1) {
    return invalid_argument(path + ": field '" + key + "' = " + json_input::render(*it) +
                            " must be in (0, 1]");
  }
  *out = it->get<float>();
  return Status::Ok();
}

Status get_positive(const json& j, const std::string& path, const char* key_list, float* out) {
  std::string key;
  const auto it = find_key(j, key_list, &key);
  if (it == j.end()) return Status::Ok();
  if (!it->is_number() || !(it->get<double>() > 0) || it->get<double>() > 1e30) {
    return invalid_argument(path + ": field '" + key + "' = " + json_input::render(*it) +
                            " must be a positive number");
  }
  *out = it->get<float>();
  return Status::Ok();
}

}  // namespace tessera::model::config_fields
