// The tolerance rule of FlashAttention's tests (see docs/CONFORMANCE.md):
//
//   max|got - ref64| <= kNaiveFactor * max|naive - ref64| + floor
//   floor = kFloorUlps * u * max(max|ref64|, min_magnitude)
//
// ref64 is the float64 reference, naive the naive formula in the input
// precision (naive.h), u the unit roundoff of the judged values' precision.
// Maxima run over the rows that see at least one key and hold no NaN; the
// other rows are judged exactly: a row with no visible key must be zeros
// (lse -inf), a NaN row must be all NaN. A non-finite value where ref64 is
// finite counts as an infinite error.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "tessera/dtype.h"

namespace tessera::verify {

inline constexpr double kNaiveFactor = 2.0;
inline constexpr double kFloorUlps = 2.0;

enum class RowKind : uint8_t { kNormal, kNoVisibleKey, kNan };
// A row's kind, read from its float64-reference lse.
RowKind row_kind(float ref_lse);

// The rounding floor's parameters for the output in `dtype`, and for lse (f32,
// magnitude at least 1: lse is a log of a sum, its error scales like |max| + 1).
struct FloorSpec {
  double unit_roundoff = 0;
  double min_magnitude = 0;
};
FloorSpec output_floor(DType dtype);
FloorSpec lse_floor();

struct Element {
  int64_t row = -1;  // -1: none
  int64_t col = 0;
  double got = 0, want = 0, error = 0;
};

// Values are in row order: row r holds `width` values (Dv for out, 1 for lse).
struct JudgeInput {
  std::string_view field;  // "out" or "lse"
  const float* got = nullptr;
  const float* ref = nullptr;
  const float* naive = nullptr;
  const float* ref_lse = nullptr;  // per row: decides its kind
  int64_t rows = 0;
  int64_t width = 1;
  FloorSpec floor;
  float no_key_value = 0.0f;  // what a row with no visible key must hold
};

struct Judgement {
  std::string field;
  double max_error = 0;
  Element worst;
  double naive_error = 0;
  Element naive_worst;
  double floor = 0;
  double bound = 0;
  int64_t exact_failures = 0;  // rows that broke the no-key or NaN semantics
  Element first_exact_failure;
  RowKind first_exact_kind = RowKind::kNormal;

  bool ok() const { return exact_failures == 0 && max_error <= bound; }
  // One line; `row_name` turns a row index into "[b=.., i=.., h=..]".
  std::string describe(const std::function<std::string(int64_t)>& row_name) const;
};

Judgement judge(const JudgeInput& in);

}  // namespace tessera::verify
