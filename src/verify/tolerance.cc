#include "verify/tolerance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace tessera::verify {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string num(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

bool holds(float got, float want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want;
}

}  // namespace

RowKind row_kind(float ref_lse) {
  if (std::isnan(ref_lse)) return RowKind::kNan;
  if (ref_lse == -std::numeric_limits<float>::infinity()) return RowKind::kNoVisibleKey;
  return RowKind::kNormal;
}

FloorSpec output_floor(DType dtype) {
  const double min_normal =
      dtype == DType::kF16 ? 0x1p-14 : static_cast<double>(std::numeric_limits<float>::min());
  return {dtype_unit_roundoff(dtype), min_normal};
}

FloorSpec lse_floor() { return {dtype_unit_roundoff(DType::kF32), 1.0}; }

Judgement judge(const JudgeInput& in) {
  Judgement j;
  j.field = std::string(in.field);
  double max_ref = 0;
  for (int64_t r = 0; r < in.rows; ++r) {
    const RowKind kind = row_kind(in.ref_lse[r]);
    for (int64_t c = 0; c < in.width; ++c) {
      const int64_t e = r * in.width + c;
      const float got = in.got[e], want = in.ref[e];
      if (kind != RowKind::kNormal) {
        const float must =
            kind == RowKind::kNan ? std::numeric_limits<float>::quiet_NaN() : in.no_key_value;
        if (!holds(got, must)) {
          if (j.exact_failures == 0) {
            j.first_exact_failure = {r, c, got, must, kInf};
            j.first_exact_kind = kind;
          }
          ++j.exact_failures;
          break;  // one failure per row
        }
        continue;
      }
      if (std::isfinite(want)) max_ref = std::max(max_ref, std::fabs(static_cast<double>(want)));
      const auto error_of = [&](float x) {
        if (std::isnan(want)) return std::isnan(x) ? 0.0 : kInf;
        if (!std::isfinite(x)) return x == want ? 0.0 : kInf;
        return std::fabs(static_cast<double>(x) - static_cast<double>(want));
      };
      const double err = error_of(got);
      if (err > j.max_error || j.worst.row < 0) j.worst = {r, c, got, want, err};
      j.max_error = std::max(j.max_error, err);
      const double naive_err = error_of(in.naive[e]);
      if (naive_err > j.naive_error || j.naive_worst.row < 0) {
        j.naive_worst = {r, c, in.naive[e], want, naive_err};
      }
      j.naive_error = std::max(j.naive_error, naive_err);
    }
  }
  j.floor = kFloorUlps * in.floor.unit_roundoff * std::max(max_ref, in.floor.min_magnitude);
  j.bound = kNaiveFactor * j.naive_error + j.floor;
  return j;
}

std::string Judgement::describe(const std::function<std::string(int64_t)>& row_name) const {
  const auto where = [&](const Element& e) {
    return row_name(e.row) + (field == "lse" ? "" : " d=" + std::to_string(e.col));
  };
  if (exact_failures > 0) {
    const Element& e = first_exact_failure;
    const std::string what = first_exact_kind == RowKind::kNan ? "has a NaN score" : "sees no key";
    std::string text = field + ": " + std::to_string(exact_failures) +
                       " row(s) broke the exact rows rule; first " + where(e) + " " + what +
                       ": got " + num(e.got) + ", want " + num(e.want);
    if (max_error > bound) text += "; and " + field + " error " + num(max_error) + " > bound";
    return text;
  }
  std::string text = field + ": max|got - ref64| = " + num(max_error);
  if (worst.row >= 0) {
    text += " at " + where(worst) + " (got " + num(worst.got) + ", want " + num(worst.want) + ")";
  }
  text += (ok() ? " <= " : " > ") + std::string("bound ") + num(bound) + " = " + num(kNaiveFactor) +
          " x naive " + num(naive_error);
  if (naive_worst.row >= 0) text += " (at " + where(naive_worst) + ")";
  text += " + floor " + num(floor);
  return text;
}

}  // namespace tessera::verify
