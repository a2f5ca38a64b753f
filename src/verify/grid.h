// The conformance case grid: odd sizes on purpose (FlashAttention's tests),
// every value of every axis present, each feature crossed with several sizes,
// masks and dtypes; not the full cross product (a float64 reference on two
// cores could not finish it). docs/CONFORMANCE.md describes the sections.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "verify/case.h"
#include "verify/runner.h"

namespace tessera::verify {

// The axes the grid covers; tests/verify checks every value appears.
inline constexpr int64_t kSeqLens[] = {1, 7, 64, 113, 129, 1000, 1023};
inline constexpr int64_t kHeadDims[] = {16, 32, 40, 59, 64, 80, 96, 111, 128, 256};
inline constexpr int64_t kBatches[] = {1, 3};
inline constexpr DType kDTypes[] = {DType::kF32, DType::kBF16, DType::kF16};

// Every case of tests/conformance (and `tessera verify --full`).
std::vector<AttentionCase> full_grid();
// A small subset covering every feature and dtype (`tessera verify`, --quick).
std::vector<AttentionCase> quick_grid();
// Invalid calls: each must fail with InvalidArgument and leave out untouched.
std::vector<InvalidCase> invalid_cases();

// The small problem of the dispatcher and observability tests: f32
// [1, s, h, d], MHA, no mask, N(0, 1) inputs from `seed`.
AttentionCase small_case(int64_t s = 9, int64_t h = 2, int64_t d = 8, uint64_t seed = 7);

// Named shape grids of bench and tune, in the shape syntax (case_text.h).
// `tessera bench attention` by default: small shapes for the default job, an
// encoder batch, a long document, decode.
inline constexpr std::string_view kBenchShapes =
    "B=4,S=256,H=12,D=64,dtype=f32;"
    "B=1,S=1024,H=8,D=64,dtype=f32,mask=causal;"
    "B=1,Sq=1,Sk=4096,Hq=16,Hkv=4,D=128,dtype=f32";
// `tessera tune` by default: one shape per bucket (encoder batches at two
// lengths, a larger head dim, decode against a long cache), each in f32 and
// bf16, without and with a causal mask. Small enough that the reference
// backend's runs stay short.
std::string tune_shapes();
// The grid `tessera tune --shipped-defaults` measures (`--shapes decode`):
// one query row against a KV cache of 512, 2048 and 8192 keys, head dim 64
// and 128, f32 and bf16, without and with a causal mask, each bucket once
// as GQA (32 query / 8 KV heads) and once as MHA (16 heads), batch 1.
std::string decode_tune_shapes();

}  // namespace tessera::verify
