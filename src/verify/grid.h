// The conformance case grid: odd sizes on purpose (FlashAttention's tests),
// every value of every axis present, each feature crossed with several sizes,
// masks and dtypes; not the full cross product (a float64 reference on two
// cores could not finish it). docs/CONFORMANCE.md describes the sections.
#pragma once

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

}  // namespace tessera::verify
