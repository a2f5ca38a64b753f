// What this process runs on and was built with: the key of a tuned decision
// table and the labels of tessera_build_info.
#pragma once

#include <string>

namespace tessera {

struct MachineInfo {
  std::string cpu_model;        // /proc/cpuinfo "model name" ("AMD EPYC 9B45"), else "unknown";
                                // with " (TESSERA_CPU_CAP=KIND)" under a cap
  int hardware_threads = 0;     // std::thread::hardware_concurrency()
  std::string tessera_version;  // "0.1.0"
  std::string gemm_library;     // "oneDNN 2.6.3"
  std::string simd_library;     // "Highway 1.0.3" ("" when not built with it)
  std::string compiler;         // "GCC 12.2.0"
};

MachineInfo machine_info();

}  // namespace tessera
