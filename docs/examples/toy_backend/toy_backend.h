// toy: an example backend that delegates to the reference (docs/CONTRIBUTING.md).
#pragma once

#include <memory>

#include "tessera/backend.h"

namespace tessera {

// The folder's one factory: tessera_add_backend(NAME toy) finds it by the
// naming rule make_<folder>_backend, declared in <folder>/<folder>_backend.h.
std::unique_ptr<Backend> make_toy_backend();

}  // namespace tessera
