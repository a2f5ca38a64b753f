// cpu.flash's product paths: what each applies to, what runs here, and the
// default a table row gives (the rows are in product_path_table.cc).
#include "cpu_flash/product_paths.h"

#include "cpu_flash/flash_forward.h"
#include "runtime/cpu_features.h"

#if defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace tessera::cpu_flash {

namespace {

// Linux keeps the 8 KiB tile state out of a process until it asks
// (ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA); a tile instruction without
// that permission faults. Asked once.
bool os_grants_amx() {
#if defined(__x86_64__)
  static const bool granted = [] {
    if (!cpu_features().amx) return false;
    constexpr long kArchReqXcompPerm = 0x1023;
    constexpr long kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return granted;
#else
  return false;
#endif
}

}  // namespace

std::string_view path_name(Products path) {
  switch (path) {
    case Products::kF32:
      return "f32";
    case Products::kBf16Dot:
      return "bf16dot";
    case Products::kAmx:
      return "amx";
  }
  return "?";
}

std::string path_refusal(Products path, DType dtype, int64_t d) {
  if (path == Products::kF32) return "";
  const std::string name(path_name(path));
  if (dtype != DType::kBF16) {
    return "dtype " + std::string(dtype_name(dtype)) + ": the " + name +
           " path takes bf16 inputs only";
  }
  if (path == Products::kBf16Dot && d % 2 != 0) {
    return "D = " + std::to_string(d) + " is odd: the bf16dot path multiplies bf16 pairs";
  }
  if (path == Products::kAmx && d % kAmxDvStep != 0) {
    return "D = " + std::to_string(d) + " is not a multiple of " + std::to_string(kAmxDvStep) +
           ": the amx path's tiles take " + std::to_string(kAmxDvStep) + " bf16 per step";
  }
  return "";
}

bool path_applies(Products path, DType dtype, int64_t d) {
  switch (path) {
    case Products::kF32:
      return true;
    case Products::kBf16Dot:
      return dtype == DType::kBF16 && d % 2 == 0;
    case Products::kAmx:
      return dtype == DType::kBF16 && d % kAmxDvStep == 0;
  }
  return false;
}

bool cpu_has_bf16_dot() { return cpu_features().avx512_bf16; }

bool cpu_has_amx() { return cpu_has_bf16_dot() && os_grants_amx(); }

bool path_available(Products path) {
  switch (path) {
    case Products::kF32:
      return true;
    case Products::kBf16Dot:
      return cpu_has_bf16_dot() && target_has_path(path);
    case Products::kAmx:
      return cpu_has_amx() && target_has_path(path);
  }
  return false;
}

std::string path_unavailable_reason(Products path) {
  if (path == Products::kF32) return "";
  if (!cpu_has_bf16_dot()) {
    return "this CPU has no " +
           std::string(path == Products::kAmx ? "AMX-BF16 tiles" : "AVX512_BF16") + " (CPU kind " +
           cpu_kind_description() + ")";
  }
  if (path == Products::kAmx && !cpu_features().amx) {
    return "this CPU has no AMX-BF16 tiles (CPU kind " + cpu_kind_description() + ")";
  }
  if (path == Products::kAmx && !os_grants_amx()) {
    return "the OS refused this process the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM)";
  }
  if (!target_has_path(path)) {
    return "the SIMD target cpu.flash runs here (" + std::string(flash_target_name()) +
           ") has no " + std::string(path_name(path)) + " code";
  }
  return "";
}

const ProductPathRow& product_path_row(CpuKind kind) {
  for (const ProductPathRow& row : product_path_table()) {
    if (row.kind == kind) return row;
  }
  // Every kind has a row (product_paths_test); the first, generic, row is
  // the safe answer if a kind were ever added without one.
  return product_path_table().front();
}

Products product_path_for(DType dtype, int64_t d, ProblemForm form) {
  static const ProductPathRow& row = product_path_row(cpu_kind());
  return path_from_ranking(row.ranking(form), dtype, d,
                           [](Products path) { return path_available(path); });
}

// make_params decides the form (it knows the strides, bias and scratch
// sizes the decode loop needs) and picks the path with it.
Products product_path_for(const AttentionArgs& args) {
  FlashParams p;
  make_params(args, 1, &p);
  return p.products;
}

}  // namespace tessera::cpu_flash
