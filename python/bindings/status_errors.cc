#include "status_errors.h"

#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace tessera::python {

void throw_if_error(const Status& status) {
  if (status.ok()) return;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      throw nb::value_error(status.message().c_str());
    default:
      // The code name stays in the text: "Unsupported: ...", "ResourceExhausted: ...".
      throw std::runtime_error(status.to_string());
  }
}

}  // namespace tessera::python
