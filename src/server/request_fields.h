// The field parsers every request body shares (request_parse.cc and
// request_parse_heads.cc): each names the field and the value it got.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
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
// The same with another bound: at most max_texts, `limit` naming it in the
// message ("OpenAI's limit").
ApiError parse_texts(const json& body, const char* field, size_t max_texts, const char* limit,
                     std::vector<std::string>* out);

// An optional boolean field; absent or null keeps *out. `prefix` names the
// object holding it ("parameters.").
ApiError parse_bool(const json& obj, const char* key, bool* out, const std::string& prefix = "");

// An optional string field; absent or null leaves *out empty.
ApiError parse_optional_string(const json& obj, const char* key, std::optional<std::string>* out,
                               const std::string& prefix = "");

// An optional integer field; absent or null leaves *out empty. A fraction,
// a string or an integer past int64 is refused naming the field and value.
ApiError parse_optional_int(const json& obj, const char* key, std::optional<int64_t>* out,
                            const std::string& prefix = "");

// The text options TEI's embedding routes share (truncate,
// truncation_direction, prompt_name), in `obj` (the body, or /similarity's
// "parameters"); `prefix` names obj in messages.
ApiError parse_text_options(const json& obj, const std::string& prefix, const ParseLimits& limits,
                            TextRequestOptions* out);

// The same for the routes of models with a head, which cut pairs longest
// first and prepend no prompt: "Right" only, no prompt_name.
ApiError parse_text_options(const json& obj, const std::string& prefix, const ParseLimits& limits,
                            bool* truncate);

}  // namespace tessera::server::request_fields
