// The field parsers every request body shares (request_parse.cc and
// request_parse_heads.cc): each names the field and the value it got.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/json_input.h"
#include "server/api_error.h"
#include "server/request_parse.h"

namespace tessera::server::request_fields {

using nlohmann::json;

// A short rendering of a JSON value for messages ("got number 3"), bounded
// whatever the value's size or depth.
inline std::string describe(const json& v) { return json_input::describe(v); }

// The body as a JSON object: 400 when it is not JSON, 422 when not an object.
ApiError parse_object(std::string_view body, json* out);

// `field` is a string or a non-empty list of strings, at most
// limits.max_client_batch_size long.
ApiError parse_texts(const json& body, const char* field, const ParseLimits& limits,
                     std::vector<std::string>* out);

// An optional boolean field; absent or null keeps *out. `prefix` names the
// object holding it ("parameters.").
ApiError parse_bool(const json& obj, const char* key, bool* out, const std::string& prefix = "");

// The text options TEI's routes share (truncate, truncation_direction,
// prompt_name), in `obj` (the body, or /similarity's "parameters"); `prefix`
// names obj in messages.
ApiError parse_text_options(const json& obj, const std::string& prefix, const ParseLimits& limits,
                            bool* truncate);

}  // namespace tessera::server::request_fields
