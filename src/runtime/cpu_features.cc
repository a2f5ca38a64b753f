#include "runtime/cpu_features.h"

#include <hwy/targets.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <dnnl.hpp>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace tessera {

namespace {

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__)
  // libgcc's bits include the OS's consent (XCR0) for the AVX and AVX-512 state.
  __builtin_cpu_init();
  f.avx2_fma = __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
  f.avx512 = f.avx2_fma && __builtin_cpu_supports("avx512f") != 0 &&
             __builtin_cpu_supports("avx512bw") != 0 && __builtin_cpu_supports("avx512vl") != 0;
  f.avx512_vnni = f.avx512 && __builtin_cpu_supports("avx512vnni") != 0;
  f.avx512_bf16 = f.avx512 && __builtin_cpu_supports("avx512bf16") != 0;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  // CPUID leaf 7 sub-leaf 0: EDX bit 22 AMX-BF16, bit 24 AMX-TILE, bit 25 AMX-INT8.
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0) {
    f.amx = f.avx512_bf16 && (edx & (1u << 22)) != 0 && (edx & (1u << 24)) != 0;
    f.amx_int8 = f.amx && (edx & (1u << 25)) != 0;
  }
  // Sub-leaf 1: EAX bit 4 AVX-VNNI.
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0) {
    f.avx_vnni = f.avx2_fma && (eax & (1u << 4)) != 0;
  }
  f.amd = __builtin_cpu_is("amd") != 0;
#endif
  return f;
}

// How far up the kinds go; the two bf16 kinds share a rung.
int rung(CpuKind k) {
  switch (k) {
    case CpuKind::kGeneric:
      return 0;
    case CpuKind::kAvx2:
      return 1;
    case CpuKind::kAvx512:
      return 2;
    case CpuKind::kAvx512Bf16Amd:
    case CpuKind::kAvx512Bf16Intel:
      return 3;
    case CpuKind::kAmx:
      return 4;
  }
  return 0;
}

struct CapState {
  bool set = false;  // a cap is in force
  CpuKind kind = CpuKind::kGeneric;
  std::string error;  // why the variable's value was not applied
};

// Highway's targets above the cap (hwy::DisableTargets' mask).
int64_t highway_targets_above(CpuKind cap) {
  int64_t mask = 0;
  if (rung(cap) < 3) mask |= HWY_AVX3_DL;  // AVX3_DL implies VNNI, which the lower kinds lack
  if (rung(cap) < 2) mask |= HWY_AVX3;
  if (rung(cap) < 1) mask |= HWY_AVX2;
  return mask;
}

dnnl::cpu_isa onednn_isa(CpuKind cap) {
  switch (rung(cap)) {
    case 0:
      return dnnl::cpu_isa::sse41;
    case 1:
      return dnnl::cpu_isa::avx2;
    case 2:
      return dnnl::cpu_isa::avx512_core;
    case 3:
      return dnnl::cpu_isa::avx512_core_bf16;
    default:
      return dnnl::cpu_isa::all;
  }
}

// The rung of an ONEDNN_MAX_CPU_ISA value (oneDNN reads the variable itself);
// 5 for ALL, an unknown or absent value.
int onednn_environment_rung() {
  const char* v = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (v == nullptr) v = std::getenv("DNNL_MAX_CPU_ISA");
  if (v == nullptr) return 5;
  std::string isa(v);
  for (char& c : isa) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (isa == "SSE41" || isa == "AVX") return 0;
  if (isa == "AVX2" || isa == "AVX2_VNNI") return 1;
  if (isa == "AVX512_CORE" || isa == "AVX512_CORE_VNNI") return 2;
  if (isa == "AVX512_CORE_BF16" || isa == "AVX512_CORE_FP16") return 3;
  if (isa == "AVX512_CORE_AMX") return 4;
  return 5;
}

// Applied once, before any kernel: both libraries read their ISA settings on
// first use and ignore later changes. A lower ONEDNN_MAX_CPU_ISA already in
// the environment stands (set_max_cpu_isa would override it).
void apply_to_libraries(CpuKind cap) {
  hwy::DisableTargets(highway_targets_above(cap));
  if (rung(cap) < 4 && rung(cap) < onednn_environment_rung() &&
      dnnl::set_max_cpu_isa(onednn_isa(cap)) != dnnl::status::success) {
    std::fprintf(stderr, "tessera: %s: oneDNN refused the ISA cap (already in use)\n",
                 kCpuCapVariable);
  }
}

const CapState& cap_state() {
  static const CapState state = [] {
    CapState s;
    const char* value = std::getenv(kCpuCapVariable);
    if (value == nullptr || *value == '\0') return s;
    CpuKind kind = CpuKind::kGeneric;
    if (!parse_cpu_kind(value, &kind)) {
      s.error = std::string(kCpuCapVariable) + "='" + value +
                "' is not a CPU kind (generic, x86-avx2, x86-avx512, x86-avx512bf16-amd, "
                "x86-avx512bf16-intel, x86-amx)";
      return s;
    }
    if (std::string why = cpu_cap_refusal(kind, detected_cpu_features()); !why.empty()) {
      s.error = std::string(kCpuCapVariable) + "='" + value + "': " + why;
      return s;
    }
    s.set = true;
    s.kind = kind;
    apply_to_libraries(kind);
    return s;
  }();
  return state;
}

// Applies the cap when the library is loaded, before main() and before any
// kernel dispatch, in every binary that links the runtime's capability queries.
[[maybe_unused]] const bool kCapAppliedAtLoad = (cap_state(), true);

}  // namespace

const CpuFeatures& detected_cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

CpuFeatures capped_features(const CpuFeatures& detected, CpuKind cap) {
  CpuFeatures f = detected;
  const int r = rung(cap);
  f.avx2_fma = f.avx2_fma && r >= 1;
  f.avx512 = f.avx512 && r >= 2;
  f.avx512_vnni = f.avx512_vnni && r >= 3;
  f.avx512_bf16 = f.avx512_bf16 && r >= 3;
  // oneDNN's avx512_core_bf16 level excludes avx2_vnni; the features follow it.
  f.avx_vnni = f.avx_vnni && r >= 4;
  f.amx = f.amx && r >= 4;
  f.amx_int8 = f.amx_int8 && r >= 4;
  return f;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = [] {
    const CapState& cap = cap_state();
    return cap.set ? capped_features(detected_cpu_features(), cap.kind) : detected_cpu_features();
  }();
  return f;
}

CpuKind kind_of(const CpuFeatures& f) {
  if (!f.avx2_fma) return CpuKind::kGeneric;
  if (!f.avx512) return CpuKind::kAvx2;
  if (!f.avx512_bf16) return CpuKind::kAvx512;
  if (f.amx) return CpuKind::kAmx;
  return f.amd ? CpuKind::kAvx512Bf16Amd : CpuKind::kAvx512Bf16Intel;
}

CpuKind detected_cpu_kind() {
  static const CpuKind k = kind_of(detected_cpu_features());
  return k;
}

CpuKind cpu_kind() {
  static const CpuKind k = kind_of(cpu_features());
  return k;
}

std::string cpu_cap_refusal(CpuKind cap, const CpuFeatures& detected) {
  const CpuKind real = kind_of(detected);
  const std::string named = "this CPU is " + std::string(cpu_kind_name(real));
  if (rung(cap) > rung(real)) {
    return "a cap above the CPU (" + named + "): a cap can only lower the kind";
  }
  if (rung(cap) == 3 && (cap == CpuKind::kAvx512Bf16Amd) != detected.amd) {
    return "the kind names the other vendor (" + named + ")";
  }
  return "";
}

std::string cpu_kind_description() {
  std::string text(cpu_kind_name(cpu_kind()));
  if (cap_state().set) {
    text += std::string(" by ") + kCpuCapVariable + "; the CPU is " +
            std::string(cpu_kind_name(detected_cpu_kind()));
  }
  return text;
}

bool cpu_cap(CpuKind* kind) {
  const CapState& s = cap_state();
  if (s.set && kind != nullptr) *kind = s.kind;
  return s.set;
}

Status cpu_cap_status() {
  const CapState& s = cap_state();
  return s.error.empty() ? Status::Ok() : invalid_argument(s.error);
}

}  // namespace tessera
