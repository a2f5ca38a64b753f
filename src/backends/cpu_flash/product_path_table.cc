// The shipped table: for each CPU kind, the order plain cpu.flash tries its
// product paths in, and the measured figures that order was chosen from.
// Figure: S2 = B=1, S=4096, H=16, D=64, dtype=bf16, no mask, 2 threads, in
// GFLOP/s (4 * Sq * Sk * D per head / median time). The full tables are in
// docs/BENCHMARKS.md and docs/DECISIONS.md ("cpu.flash picks its product path
// from a measured table per CPU kind"). product_paths_test checks that each
// row's order is its figures' order, fastest first, and that every CpuKind
// has a row. A user whose machine measures otherwise runs `tessera tune`,
// which times the variants cpu.flash:f32 / :bf16dot / :amx and ranks them.
//
// To add a measurement: time the S2 bf16 shape once per path, through the
// variants (`tessera bench attention --backends cpu.flash:f32,cpu.flash:bf16dot
// --shapes "B=1,S=4096,H=16,D=64,dtype=bf16" --iters 5`), and write the
// figures, the machine and the date into the kind's row.
#include "cpu_flash/product_paths.h"

namespace tessera::cpu_flash {

namespace {

using P = Products;

constexpr ProductPathRow kTable[] = {
    {CpuKind::kGeneric,
     {P::kF32},
     1,
     {0, 0, 0},
     "",
     "",
     "",
     "one path applies: without AVX2 the bf16 paths' instructions are absent, so there is "
     "nothing to choose"},
    {CpuKind::kAvx2,
     {P::kF32},
     1,
     {110.5, 0, 0},
     "AMD EPYC (Zen 3)",
     "2026-12-02 16:35 UTC, commit 45cb1d5: python3 bench/attention_table.py --build "
     "build/release --threads 2",
     "docs/BENCHMARKS.md, \"AMD EPYC Zen 3, AVX2\"",
     "one path applies: AVX2 has no bf16 dot product and no AMX; the f32 figure is for "
     "reference"},
    {CpuKind::kAvx512,
     {P::kF32},
     1,
     {0, 0, 0},
     "",
     "",
     "",
     "one path applies: AVX-512 without AVX512_BF16 has neither bf16 path; not measured"},
    {CpuKind::kAvx512Bf16Amd,
     {P::kBf16Dot, P::kF32},
     2,
     {323, 451, 0},
     "AMD EPYC (Zen 5)",
     "2026-12-03 (issue 18): python3 bench/attention_table.py --build build/release --boost "
     "--threads 2 --iters 5, and tessera bench attention --backends cpu.flash with the bf16 dot "
     "path switched on",
     "docs/DECISIONS.md, \"cpu.flash picks its product path from a measured table per CPU kind\"",
     "vdpbf16ps runs at twice the f32 FMA rate on this core (MACHINE-NOTES: 880 vs 435 "
     "GFLOP/s), so bf16dot wins, 1.40x the f32 products; no AMX on this kind"},
    {CpuKind::kAvx512Bf16Intel,
     {P::kF32, P::kBf16Dot},
     2,
     {309.5, 190.4, 0},
     "Intel(R) Xeon(R) Processor",
     "2026-12-02: tessera --attention=only:cpu.flash bench attention --shapes "
     "\"B=1,S=4096,H=16,D=64,dtype=bf16\" --iters 3, bf16 dot path on (361 ms) and off (222 ms)",
     "docs/DECISIONS.md, \"cpu.flash picks its product path from a measured table per CPU kind\"",
     "measured on the AMX Xeon's cores before the AMX path existed (no Intel CPU with "
     "AVX512_BF16 and no AMX has been measured): vdpbf16ps gave no more products per cycle than "
     "the two f32 FMA ports and the pair packing cost extra, so f32 wins, 1.63x"},
    {CpuKind::kAmx,
     {P::kAmx, P::kF32, P::kBf16Dot},
     3,
     {309.5, 190.4, 921.4},
     "Intel(R) Xeon(R) Processor",
     "f32 and bf16dot: 2026-12-02 (as the x86-avx512bf16-intel row); amx: 2026-12-03 05:58 UTC, "
     "commit 7af678e: python3 bench/attention_table.py --build build/release --boost --threads 2 "
     "--iters 7",
     "docs/BENCHMARKS.md, \"Intel Xeon with AVX-512, AVX512_BF16 and AMX: the current table\"; "
     "docs/DECISIONS.md",
     "AMX tiles run S2 bf16 2.98x the f32 products; where amx does not apply (D % 32 != 0) or "
     "the OS refuses the tile state, f32 before bf16dot, as on the same cores without AMX"},
};

}  // namespace

std::span<const ProductPathRow> product_path_table() { return kTable; }

}  // namespace tessera::cpu_flash
