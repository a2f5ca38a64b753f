// The instruction-set features tessera's kernels may use on this CPU: the one
// place every capability query (the CPU kind, cpu.flash's product paths, the
// int8 and bf16 GEMM paths, runtime's vector passes, the peak probes) reads.
//
// TESSERA_CPU_CAP=<kind> (a CpuKind name: x86-avx2, x86-avx512, ...) makes a
// process behave as that lower kind on a bigger machine, so a test run on an
// AVX-512 or AMX CPU exercises the code an AVX2-only CPU runs: the features
// above the kind are hidden, Highway's targets above it are disabled and
// oneDNN's ISA is capped (dnnl::set_max_cpu_isa), all before the first kernel
// runs. The variable is read once per process. A cap above the real CPU, or an
// unknown name, is not applied: cpu_cap_status() says why, and the front doors
// (CLI, server, Python) refuse to start with that message.
#pragma once

#include <string>

#include "runtime/cpu_kind.h"
#include "tessera/status.h"

namespace tessera {

struct CpuFeatures {
  bool avx2_fma = false;     // AVX2 + FMA
  bool avx512 = false;       // AVX-512 F, BW, VL (and DQ, CD)
  bool avx512_vnni = false;  // AVX512_VNNI (int8 dot products)
  bool avx_vnni = false;     // AVX-VNNI (256-bit int8 dot products)
  bool avx512_bf16 = false;  // AVX512_BF16 (vdpbf16ps)
  bool amx = false;          // AMX-TILE + AMX-BF16 (the OS's permission is asked separately)
  bool amx_int8 = false;     // AMX-INT8
  bool amd = false;          // vendor, for the kinds that name it
};

// The features as the CPU reports them (CPUID; libgcc checks the OS's XCR0).
const CpuFeatures& detected_cpu_features();
// The features tessera may use: the detected ones less those above the cap.
const CpuFeatures& cpu_features();

// The kind the features amount to (cpu_kind() is kind_of(cpu_features())).
CpuKind kind_of(const CpuFeatures& f);
// The detected kind, whatever the cap.
CpuKind detected_cpu_kind();

// The kind for messages: "x86-avx512", or under a cap
// "x86-avx2 by TESSERA_CPU_CAP; the CPU is x86-avx512".
std::string cpu_kind_description();

// The environment variable's name, for messages.
inline constexpr const char* kCpuCapVariable = "TESSERA_CPU_CAP";
// The cap in force, or false when none is set (or it was refused).
bool cpu_cap(CpuKind* kind);
// OK when TESSERA_CPU_CAP is unset or applied; otherwise InvalidArgument naming
// the variable, its value and the detected kind.
Status cpu_cap_status();

// Checks a cap against a detected CPU without applying it (the rule the
// variable goes through; exposed for tests). Empty when `cap` may apply.
std::string cpu_cap_refusal(CpuKind cap, const CpuFeatures& detected);
// The detected features less those above `cap` (exposed for tests).
CpuFeatures capped_features(const CpuFeatures& detected, CpuKind cap);

}  // namespace tessera
