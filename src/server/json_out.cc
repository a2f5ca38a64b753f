#include "server/json_out.h"

#include <openssl/evp.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace tessera::server {

static_assert(std::endian::native == std::endian::little,
              "base64_floats sends the host's f32 bytes; OpenAI clients read little-endian");

void append_float_row(const float* row, int64_t n, std::string* out) {
  constexpr size_t kMaxFloatChars = 24;  // "-1.17549435e-38" and margin
  char buf[kMaxFloatChars];
  out->push_back('[');
  for (int64_t i = 0; i < n; ++i) {
    if (i) out->push_back(',');
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), row[i]);
    out->append(buf, end);
  }
  out->push_back(']');
}

std::string base64_encode(const void* bytes, size_t n) {
  std::string out(4 * ((n + 2) / 3), '\0');
  // EVP_EncodeBlock writes a trailing NUL beyond the 4*ceil(n/3) characters.
  out.resize(out.size() + 1);
  const int written =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      static_cast<const unsigned char*>(bytes), static_cast<int>(n));
  out.resize(static_cast<size_t>(written));
  return out;
}

std::string base64_floats(const float* row, int64_t n) {
  return base64_encode(row, static_cast<size_t>(n) * sizeof(float));
}

std::string json_text(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string tei_error_body(const ApiError& e) {
  nlohmann::json j = {{"error", e.message}, {"error_type", e.type}};
  if (!e.field.empty()) j["field"] = e.field;
  return json_text(j);
}

std::string openai_error_body(const ApiError& e) {
  const char* type = "server_error";  // 424, 500, 503: not the client's fault
  if (e.status == 401) {
    type = "authentication_error";
  } else if (e.status == 429) {
    type = "rate_limit_error";
  } else if (e.status == 400 || e.status == 404 || e.status == 408 || e.status == 413 ||
             e.status == 414 || e.status == 422 || e.status == 431) {
    type = "invalid_request_error";
  }
  nlohmann::json err = {
      {"message", e.message},
      {"type", type},
      {"code", e.code.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.code)}};
  err["param"] = e.field.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.field);
  return json_text({{"error", err}});
}

std::string cohere_error_body(const ApiError& e) {
  nlohmann::json j = {{"message", e.message}};
  if (!e.field.empty()) j["field"] = e.field;
  return json_text(j);
}

}  // namespace tessera::server
