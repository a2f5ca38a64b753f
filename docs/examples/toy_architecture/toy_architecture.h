// A toy architecture: what adding one takes (docs/CONTRIBUTING.md, "Adding
// an architecture"). scripts/check-architecture-folders.sh copies this
// folder to src/model/architectures/toy/ and checks that it builds, is
// registered, and computes what numpy computes from the same tensors.
#pragma once

#include "model/architectures/architecture.h"

namespace tessera::model {

const Architecture& toy_architecture();

}  // namespace tessera::model
