#include "runtime/cpu_kind.h"

#include <array>
#include <utility>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace tessera {

namespace {

constexpr std::array<std::pair<CpuKind, std::string_view>, 6> kNames{{
    {CpuKind::kGeneric, "generic"},
    {CpuKind::kAvx2, "x86-avx2"},
    {CpuKind::kAvx512, "x86-avx512"},
    {CpuKind::kAvx512Bf16Amd, "x86-avx512bf16-amd"},
    {CpuKind::kAvx512Bf16Intel, "x86-avx512bf16-intel"},
    {CpuKind::kAmx, "x86-amx"},
}};

CpuKind detect() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") == 0 || __builtin_cpu_supports("fma") == 0) {
    return CpuKind::kGeneric;
  }
  const bool avx512 = __builtin_cpu_supports("avx512f") != 0 &&
                      __builtin_cpu_supports("avx512bw") != 0 &&
                      __builtin_cpu_supports("avx512vl") != 0;
  if (!avx512) return CpuKind::kAvx2;
  if (__builtin_cpu_supports("avx512bf16") == 0) return CpuKind::kAvx512;
  // CPUID leaf 7, sub-leaf 0: EDX bit 22 AMX-BF16, bit 24 AMX-TILE.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 && (edx & (1u << 22)) != 0 &&
      (edx & (1u << 24)) != 0) {
    return CpuKind::kAmx;
  }
  return __builtin_cpu_is("amd") != 0 ? CpuKind::kAvx512Bf16Amd : CpuKind::kAvx512Bf16Intel;
#else
  return CpuKind::kGeneric;
#endif
}

}  // namespace

CpuKind cpu_kind() {
  static const CpuKind kind = detect();
  return kind;
}

std::string_view cpu_kind_name(CpuKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "generic";
}

bool parse_cpu_kind(std::string_view name, CpuKind* kind) {
  for (const auto& [k, n] : kNames) {
    if (n == name) {
      *kind = k;
      return true;
    }
  }
  return false;
}

}  // namespace tessera
