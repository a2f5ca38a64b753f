// Every backend this build has, made by the factories of the folders under
// src/backends/ that built (the list is generated: builtin.cc.in), each
// followed by its variants: reference first, then by folder name. Backends
// that cannot run here (no GPU) are made all the same: availability() says
// why. Needs the contract alone (tessera_builtin_backends links no
// dispatcher); register_builtin_backends() (tessera/registry.h) adds them
// to a Registry.
#pragma once

#include <memory>
#include <vector>

#include "tessera/backend.h"

namespace tessera {

std::vector<std::unique_ptr<Backend>> make_builtin_backends();

}  // namespace tessera
