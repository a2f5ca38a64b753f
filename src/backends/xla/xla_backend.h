// xla: attention compiled by the platform's own compiler. The problem becomes
// a StableHLO program (stablehlo_program.h), compiled once per signature by a
// PJRT plugin loaded at run time (pjrt_plugin.h) and executed on its device,
// inputs staged from host tensors. The CPU plugin in CI; libtpu on a TPU; the
// jax CUDA plugin on NVIDIA GPUs (plugin_discovery.h).
#pragma once

#include <memory>
#include <string>

#include "tessera/backend.h"

namespace tessera {

std::unique_ptr<Backend> make_xla_backend();

namespace xla {
// The backend bound to one plugin file instead of the discovered one (tests).
std::unique_ptr<Backend> make_backend_for_plugin(const std::string& plugin_path);
}  // namespace xla

}  // namespace tessera
