// reference: the exact attention backend. It defines the contract's
// semantics; every other backend is tested against it. Slow on purpose.
#pragma once

#include <memory>

#include "tessera/backend.h"

namespace tessera {

std::unique_ptr<Backend> make_reference_backend();

}  // namespace tessera
