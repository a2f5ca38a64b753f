#include "runtime/cpu_kind.h"

#include <array>
#include <utility>

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

}  // namespace

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
