// The shipped table: for each CPU kind, the order plain cpu.flash tries its
// product paths in, and the measured figures that order was chosen from.
// Two rankings per row (product_paths.h, ProblemForm): the tile loop's by
// S2 = B=1, S=4096, H=16, D=64, dtype=bf16, no mask, 2 threads, in GFLOP/s
// (4 * Sq * Sk * D per head / median time); decode's by S4 = B=1, Sq=1,
// Sk=8192, Hq=32, Hkv=8, D=128, dtype=bf16, 2 threads, in GB/s (q, k, v read
// once, out written once, over the median time). The full tables are in
// docs/BENCHMARKS.md and docs/DECISIONS.md ("cpu.flash picks its product path
// from a measured table per CPU kind"). product_paths_test checks that each
// row's order is its figures' order, fastest first, and that every CpuKind
// has a row. A user whose machine measures otherwise runs `tessera tune`,
// which times the variants cpu.flash:f32 / :bf16dot / :amx and ranks them.
//
// To add a measurement: time the S2 and S4 bf16 shapes once per path,
// through the variants (`tessera bench attention --backends
// cpu.flash:f32,cpu.flash:bf16dot --shapes "B=1,S=4096,H=16,D=64,dtype=bf16;
// B=1,Sq=1,Sk=8192,Hq=32,Hkv=8,D=128,dtype=bf16" --iters 5`), and write the
// figures, the machine and the date into the kind's row.
#include "cpu_flash/product_paths.h"

namespace tessera::cpu_flash {

namespace {

using P = Products;

constexpr ProductPathRow kTable[] = {
    {CpuKind::kGeneric,
     {{P::kF32}, 1, {0, 0, 0}},
     {{P::kF32}, 1, {0, 0, 0}},
     "",
     "",
     "",
     "one path applies: without AVX2 the bf16 paths' instructions are absent, so there is "
     "nothing to choose"},
    {CpuKind::kAvx2,
     {{P::kF32}, 1, {110.5, 0, 0}},
     {{P::kF32}, 1, {0, 0, 0}},
     "AMD EPYC (Zen 3)",
     "2026-12-02 16:35 UTC, commit 45cb1d5: python3 bench/attention_table.py --build "
     "build/release --threads 2",
     "docs/BENCHMARKS.md, \"AMD EPYC Zen 3, AVX2\"",
     "one path applies: AVX2 has no bf16 dot product and no AMX; the f32 figure is for "
     "reference"},
    {CpuKind::kAvx512,
     {{P::kF32}, 1, {0, 0, 0}},
     {{P::kF32}, 1, {0, 0, 0}},
     "",
     "",
     "",
     "one path applies: AVX-512 without AVX512_BF16 has neither bf16 path; not measured"},
    {CpuKind::kAvx512Bf16Amd,
     {{P::kBf16Dot, P::kF32}, 2, {323, 451, 0}},
     {{P::kBf16Dot, P::kF32}, 2, {19.5, 25.9, 0}},
     "AMD EPYC (Zen 5: tiles; Zen 4, family 25 model 17: decode)",
     "tiles: 2026-12-03 (issue 18), Zen 5: python3 bench/attention_table.py --build "
     "build/release --boost --threads 2 --iters 5, and tessera bench attention --backends "
     "cpu.flash with the bf16 dot path switched on; decode: 2026-12-04 12:16 UTC, Zen 4, both "
     "paths on the decode loop (bf16dot's two products on the bf16 dot product): tessera "
     "--threads 2 "
     "bench attention --backends cpu.flash:f32,cpu.flash:bf16dot --warmup 3 --iters 30 --shapes "
     "\"B=1,Sq=1,Sk=8192,Hq=32,Hkv=8,D=128,dtype=bf16\", median of 3 runs",
     "docs/DECISIONS.md, \"cpu.flash picks its product path from a measured table per CPU "
     "kind\"; docs/BENCHMARKS.md, \"AMD EPYC Zen 4\"",
     "tiles: vdpbf16ps runs at twice the f32 FMA rate on this core (MACHINE-NOTES: 880 vs 435 "
     "GFLOP/s on the Zen 5), so bf16dot wins, 1.40x the f32 products (a Zen 4 measured 301 "
     "vs 185, 1.63x); decode: bf16dot's decode loop (both products on the dot product, K "
     "and V not widened) 1.33x the f32 products' (runs: 25.9/23.1/26.1 vs 19.5/21.0/19.2 GB/s, "
     "a loaded host); no AMX on this kind"},
    {CpuKind::kAvx512Bf16Intel,
     {{P::kF32, P::kBf16Dot}, 2, {309.5, 190.4, 0}},
     {{P::kF32, P::kBf16Dot}, 2, {0, 0, 0}},
     "Intel(R) Xeon(R) Processor",
     "2026-12-02: tessera --attention=only:cpu.flash bench attention --shapes "
     "\"B=1,S=4096,H=16,D=64,dtype=bf16\" --iters 3, bf16 dot path on (361 ms) and off (222 ms)",
     "docs/DECISIONS.md, \"cpu.flash picks its product path from a measured table per CPU kind\"",
     "measured on the AMX Xeon's cores before the AMX path existed (no Intel CPU with "
     "AVX512_BF16 and no AMX has been measured): vdpbf16ps gave no more products per cycle than "
     "the two f32 FMA ports and the pair packing cost extra, so f32 wins, 1.63x; decode not "
     "measured apart (it follows the tiles' order, f32 first, which has the decode loop)"},
    {CpuKind::kAmx,
     {{P::kAmx, P::kF32, P::kBf16Dot}, 3, {309.5, 190.4, 921.4}},
     {{P::kAmx, P::kF32, P::kBf16Dot}, 3, {0, 0, 0}},
     "Intel(R) Xeon(R) Processor",
     "f32 and bf16dot: 2026-12-02 (as the x86-avx512bf16-intel row); amx: 2026-12-03 05:58 UTC, "
     "commit 7af678e: python3 bench/attention_table.py --build build/release --boost --threads 2 "
     "--iters 7",
     "docs/BENCHMARKS.md, \"Intel Xeon with AVX-512, AVX512_BF16 and AMX: the current table\"; "
     "docs/DECISIONS.md",
     "AMX tiles run S2 bf16 2.98x the f32 products; where amx does not apply (D % 32 != 0) or "
     "the OS refuses the tile state, f32 before bf16dot, as on the same cores without AMX. "
     "Decode not measured apart: amx's tile loop streamed S4 bf16 at 77% of the triad there "
     "(23.6 GB/s); the f32 decode loop has not run on an AMX CPU since it was written"},
};

}  // namespace

std::span<const ProductPathRow> product_path_table() { return kTable; }

}  // namespace tessera::cpu_flash
