// The kind of CPU this process runs on, as far as the speed of tessera's
// kernels is concerned: the ISA level that decides which product path and
// which backend measured fastest. Shipped defaults (cpu.flash's product path,
// the dispatcher's default ranking) are keyed by it, so a default measured on
// one Zen 5 applies to every AVX512_BF16 AMD part rather than to one model
// name. The kinds are the machines this project has measured
// (shared/MACHINE-NOTES.md); anything else falls back to the nearest lower one.
#pragma once

#include <string_view>

namespace tessera {

enum class CpuKind {
  kGeneric,          // not x86-64, or x86-64 without AVX2+FMA
  kAvx2,             // AVX2 + FMA (Zen 2/3, Haswell..Alder Lake)
  kAvx512,           // AVX-512F/BW/VL without the bf16 dot product
  kAvx512Bf16Amd,    // AVX512_BF16 on AMD (Zen 4, Zen 5)
  kAvx512Bf16Intel,  // AVX512_BF16 on Intel without AMX (Cooper Lake, SPR with AMX off)
  kAmx,              // AMX-BF16 tiles (Sapphire Rapids and later Xeons)
};

// Detected once per process from CPUID (not from the OS's permission to use
// AMX tiles: that is the kernel's to ask for), lowered by TESSERA_CPU_CAP
// (runtime/cpu_features.h, where it is defined).
CpuKind cpu_kind();
// "x86-avx2", "x86-avx512", "x86-avx512bf16-amd", "x86-avx512bf16-intel",
// "x86-amx", "generic": the keys shipped tables use.
std::string_view cpu_kind_name(CpuKind kind);
// The inverse of cpu_kind_name; false for an unknown name.
bool parse_cpu_kind(std::string_view name, CpuKind* kind);

}  // namespace tessera
