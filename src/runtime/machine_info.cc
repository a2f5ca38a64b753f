#include "runtime/machine_info.h"

#include <fstream>
#include <thread>

#include "runtime/cpu_features.h"
#include "runtime/gemm.h"

#if __has_include(<hwy/highway.h>)
#include <hwy/highway.h>
#define TESSERA_HAVE_HWY_VERSION 1
#endif

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "unknown"
#endif

namespace tessera {

namespace {

std::string read_cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = line.substr(colon + 1);
    const size_t first = v.find_first_not_of(" \t");
    const size_t last = v.find_last_not_of(" \t\r");
    return first == std::string::npos ? "unknown" : v.substr(first, last - first + 1);
  }
  return "unknown";
}

std::string compiler_name() {
#if defined(__clang__)
  return "Clang " + std::to_string(__clang_major__) + "." + std::to_string(__clang_minor__) + "." +
         std::to_string(__clang_patchlevel__);
#elif defined(__GNUC__)
  return "GCC " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

}  // namespace

MachineInfo machine_info() {
  static const MachineInfo info = [] {
    MachineInfo m;
    m.cpu_model = read_cpu_model();
    // A capped process is another machine as far as tuned tables and the
    // build-info label are concerned.
    if (CpuKind cap = CpuKind::kGeneric; cpu_cap(&cap)) {
      m.cpu_model +=
          std::string(" (") + kCpuCapVariable + "=" + std::string(cpu_kind_name(cap)) + ")";
    }
    m.hardware_threads = static_cast<int>(std::thread::hardware_concurrency());
    m.tessera_version = TESSERA_VERSION;
    m.gemm_library = gemm_library_version();
#ifdef TESSERA_HAVE_HWY_VERSION
    m.simd_library = "Highway " + std::to_string(HWY_MAJOR) + "." + std::to_string(HWY_MINOR) +
                     "." + std::to_string(HWY_PATCH);
#endif
    m.compiler = compiler_name();
    return m;
  }();
  return info;
}

}  // namespace tessera
