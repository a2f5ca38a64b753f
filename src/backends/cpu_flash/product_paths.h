// cpu.flash's product paths (flash_params.h, Products): which problems each
// one can compute, which ones this process can run, and which one plain
// cpu.flash takes by default: the first path of a measured table row for
// this CPU's kind (runtime/cpu_kind.h) that applies to the problem and runs
// here. The variants cpu.flash:f32, cpu.flash:bf16dot and cpu.flash:amx
// (cpu_flash_backend.h) force one path instead. Why a shipped table and not
// a calibration at first use: docs/DECISIONS.md ("cpu.flash picks its
// product path from a measured table per CPU kind").
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "cpu_flash/flash_params.h"
#include "runtime/cpu_kind.h"

namespace tessera::cpu_flash {

inline constexpr std::array<Products, 3> kAllPaths = {Products::kF32, Products::kBf16Dot,
                                                      Products::kAmx};

// "f32", "bf16dot", "amx": the variants' name suffixes and the span's path.
std::string_view path_name(Products path);

// Why `path` cannot compute a problem of this dtype and head dim D, naming
// the value; "" when it can. f32 computes everything; the bf16 paths take
// bf16 inputs only, bf16dot an even D (bf16 pairs), amx D % 32 == 0 (tiles).
std::string path_refusal(Products path, DType dtype, int64_t d);
bool path_applies(Products path, DType dtype, int64_t d);

// Whether this process runs `path`: the CPU has the instructions, the OS
// granted the AMX tile state, and the SIMD target the kernel dispatches to
// has the path's code. Cheap after the first call (plain cpu.flash asks per
// call). The reason is "" when it runs.
bool path_available(Products path);
std::string path_unavailable_reason(Products path);
// The SIMD target's part of that (flash_forward.cc): whether the target
// flash_forward() dispatches to now runs `path` when asked (Highway 1.0.3's
// AVX3 and AVX3_DL do; a Highway with Zen 4 or SPR targets would not, and
// the path must then say so rather than run the f32 products under its name).
bool target_has_path(Products path);

// Whether this CPU has the bf16 dot product (AVX512_BF16).
bool cpu_has_bf16_dot();
// Whether this CPU has AMX-BF16 (and AVX512_BF16, which the kernels also
// use) and the kernel granted this process the tile state (arch_prctl
// ARCH_REQ_XCOMP_PERM, asked once, on first call).
bool cpu_has_amx();

// A measured order of the paths for one form of problem: the order plain
// cpu.flash tries them in, fastest measured first; the first that applies
// to the problem and runs here serves (f32, which applies to everything, is
// always listed).
struct PathRanking {
  std::array<Products, 3> order;
  int paths;  // entries of `order` in use
  // The figure per path the order was chosen from, indexed by Products,
  // higher is faster; 0 where not measured.
  std::array<double, 3> figures;
};

// The two forms ranked apart, because the same path is not the fastest for
// both: the tile loop (prefill, Sq > 1), ranked by S2 (B=1, S=4096, H=16,
// D=64, bf16) GFLOP/s, and one query per sequence (decode, Sq = 1: a stream
// over K and V), ranked by S4 (B=1, Sq=1, Sk=8192, Hq=32, Hkv=8, D=128,
// bf16) GB/s. The decode loop (decode-inl.h) serves the f32 products and
// bf16dot, amx takes its tile loop; how the paths compare differs by form
// and kind (on the Xeon amx is 3x f32 on S2; its decode is not measured).
enum class ProblemForm { kTiles, kDecode };

// One row of the shipped table (product_path_table.cc): the orders and the
// figures they were chosen from, as measured on machines of the kind.
struct ProductPathRow {
  CpuKind kind;
  PathRanking tiles;          // figures: S2 bf16 GFLOP/s
  PathRanking decode;         // figures: S4 bf16 GB/s; all 0: not measured apart,
                              // and then the same order as `tiles`
  std::string_view machine;   // `lscpu` model name of the machine(s) measured
  std::string_view measured;  // when, and the commands
  std::string_view source;    // where the full figures are
  std::string_view note;      // why the row says what it says

  const PathRanking& ranking(ProblemForm form) const {
    return form == ProblemForm::kDecode ? decode : tiles;
  }
};

// Every CpuKind has exactly one row.
std::span<const ProductPathRow> product_path_table();
const ProductPathRow& product_path_row(CpuKind kind);

// The path `ranking` gives a problem of this dtype and D, among the paths
// `runs` accepts: the first of its order that applies and runs, else f32.
template <typename Runs>
Products path_from_ranking(const PathRanking& ranking, DType dtype, int64_t d, Runs&& runs) {
  for (int i = 0; i < ranking.paths; ++i) {
    const Products path = ranking.order[static_cast<size_t>(i)];
    if (path_applies(path, dtype, d) && runs(path)) return path;
  }
  return Products::kF32;
}

// The path plain cpu.flash takes for `args` in this process: the ranking of
// the args' form in the row of cpu_kind(), among the paths available here.
// The form is decode where the problem has the decode loop's shape
// (flash_params.cc, decode_shape).
Products product_path_for(const AttentionArgs& args);
Products product_path_for(DType dtype, int64_t d, ProblemForm form);

}  // namespace tessera::cpu_flash
