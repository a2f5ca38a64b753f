// Where the PJRT plugin comes from: TESSERA_PJRT_PLUGIN when set (the CLI's
// --pjrt-plugin sets it), else the first known plugin file in a Python
// environment's site-packages: $VIRTUAL_ENV, then the project's .venv (the
// one scripts/install-deps.sh fills, baked in at build time).
#pragma once

#include <string>
#include <vector>

#include "tessera/status.h"

namespace tessera::xla {

inline constexpr char kPluginEnv[] = "TESSERA_PJRT_PLUGIN";

// Plugin files relative to site-packages, most specific device first: a TPU
// or GPU plugin that is installed is meant to be used; the CPU plugin is the
// fallback (and CI's).
inline constexpr const char* kKnownPlugins[] = {
    "libtpu/libtpu.so",
    "jax_plugins/xla_cuda13/xla_cuda_plugin.so",
    "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so",
};

// The plugin path to load, or NotFound saying where it looked.
Status find_pjrt_plugin(std::string* path);

// site-packages folders under a Python environment root (lib/python3.*/).
std::vector<std::string> site_packages_of(const std::string& env_root);

}  // namespace tessera::xla
