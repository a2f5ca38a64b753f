// tessera::Status to Python exceptions: the caller's mistakes (InvalidArgument,
// NotFound: a bad shape, dtype, name or file) raise ValueError; everything
// else (a backend failure, a refused budget, a missing device) RuntimeError.
// The message is tessera's own, which names the field and the values.
#pragma once

#include "tessera/status.h"

namespace tessera::python {

void throw_if_error(const Status& status);

}  // namespace tessera::python
