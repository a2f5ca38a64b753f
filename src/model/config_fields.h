// Typed readers for the fields of a model's JSON files (config.json,
// modules.json, the pooling config), shared by config.cc and the
// architecture folders. Every error names the file and the field; a field
// that is absent (or null) keeps *out unless it is required. A key may list
// alternatives, "hidden_size|n_embd" (the names of two config shapes of one
// architecture): the first present one is read and named in errors.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tessera/status.h"

namespace tessera::model::config_fields {

// Parses `path` and requires a JSON object.
Status read_object(const std::string& path, nlohmann::json* out);

// A positive integer (at most 2^30).
Status get_int(const nlohmann::json& j, const std::string& path, const char* key, bool required,
               int* out);
// An integer >= 0 (token ids such as pad_token_id).
Status get_index(const nlohmann::json& j, const std::string& path, const char* key, int* out);
Status get_string(const nlohmann::json& j, const std::string& path, const char* key,
                  std::string* out);
Status get_bool(const nlohmann::json& j, const std::string& path, const char* key, bool* out);
// A number in (0, 1] (layer_norm_eps).
Status get_epsilon(const nlohmann::json& j, const std::string& path, const char* key, float* out);
// A finite number > 0 (rope_theta, scaling factors).
Status get_positive(const nlohmann::json& j, const std::string& path, const char* key, float* out);

}  // namespace tessera::model::config_fields
