// ApiError: what a route answers when it cannot serve a request — the HTTP
// status, a TEI-style error type, the request field at fault and a message
// that names the field and the values.
#pragma once

#include <string>
#include <utility>

namespace tessera::server {

struct ApiError {
  int status = 0;     // 0: no error
  std::string type;   // TEI error_type: Validation, Overloaded, Backend, Unhealthy...
  std::string field;  // "inputs[3]", "encoding_format"; empty when no field is at fault
  std::string message;
  int retry_after_seconds = 0;  // > 0: sent as Retry-After (429, 503 when it may pass)
  std::string code;             // OpenAI's error code ("model_not_found"); empty: null

  bool ok() const { return status == 0; }
};

inline ApiError no_error() { return {}; }
// 422: the body is JSON but a field is wrong.
inline ApiError validation_error(std::string field, std::string message) {
  return {422, "Validation", std::move(field), std::move(message)};
}
// 413: the request is larger than a configured limit.
inline ApiError too_large_error(std::string field, std::string message) {
  return {413, "Validation", std::move(field), std::move(message)};
}

}  // namespace tessera::server
