// Status: the one error type of tessera. Messages name the field and the values
// ("q.shape[3] (D) = 59 but k.shape[3] = 64"), so a user can fix the call
// without reading our source.
#pragma once

#include <string>
#include <utility>

namespace tessera {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // the caller's args are wrong (shape, stride, dtype...)
  kUnsupported,        // valid args this backend / build cannot run
  kResourceExhausted,  // a memory budget or queue limit refused the work
  kNotFound,           // a named thing (backend, file, tensor) does not exist
  kInternal,           // a bug or a failed run inside a backend
  kUnavailable,        // the device or library is not present on this machine
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  Status(StatusCode code, std::string message, std::string option)
      : code_(code), message_(std::move(message)), option_(std::move(option)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The caller's option the message is about, by the library's name for it
  // ("max_tokens", "weights"; "" when none): the field a C++ or Python caller
  // sets. The message starts with that word, so a front end whose options
  // are spelled otherwise (the CLI's --max-tokens) renames exactly it with
  // message_naming() instead of guessing from the prose.
  const std::string& option() const { return option_; }
  // The message with its leading `option()` written as `name`.
  std::string message_naming(const std::string& name) const;
  // "InvalidArgument: <message>" or "OK".
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string option_;
};

inline Status invalid_argument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
// InvalidArgument about the caller's `option`: the message is option + rest
// ("max_tokens" + " = 1: must be at least 2").
inline Status invalid_option(const std::string& option, const std::string& rest) {
  return {StatusCode::kInvalidArgument, option + rest, option};
}
inline Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status resource_exhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status internal_error(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }

}  // namespace tessera

#define TESSERA_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::tessera::Status tessera_status_ = (expr);        \
    if (!tessera_status_.ok()) return tessera_status_; \
  } while (0)
