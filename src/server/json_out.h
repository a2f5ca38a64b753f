// Response encoding: float rows as JSON (shortest round-trip text), base64
// of little-endian f32 (OpenAI encoding_format=base64), and error bodies.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "server/api_error.h"

namespace tessera::server {

// Appends "[v0,v1,...]" with each float in its shortest form that reads back
// bit-identical. Rows must be finite (pipeline::all_finite).
void append_float_row(const float* row, int64_t n, std::string* out);

// Standard base64 (RFC 4648, padded) of bytes, via OpenSSL's EVP_EncodeBlock.
std::string base64_encode(const void* bytes, size_t n);
// The OpenAI base64 embedding: the row's f32 values, little-endian.
std::string base64_floats(const float* row, int64_t n);

// j as compact JSON text; invalid UTF-8 in its strings (client text quoted
// in a message, a decoded text) becomes U+FFFD instead of throwing.
std::string json_text(const nlohmann::json& j);

// {"error": message, "error_type": type, "field": field} (TEI shape).
std::string tei_error_body(const ApiError& e);
// {"error": {"message", "type", "param", "code"}} (OpenAI shape).
std::string openai_error_body(const ApiError& e);
// {"message": message, "field": field} (Cohere's shape, with the field).
std::string cohere_error_body(const ApiError& e);

}  // namespace tessera::server
