#include "verify/case_text.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "runtime/bounded_text.h"
#include "runtime/size_limits.h"

namespace tessera::verify {

namespace {

// Every dimension and window side; cu_seqlens are int32, so larger sequences
// could not be described anyway.
constexpr int64_t kMaxShapeValue = INT32_MAX;
// Elements of any one tensor: strides and byte counts (x 8) stay far inside
// int64 for every backend's arithmetic.
constexpr int64_t kMaxTensorElements = int64_t{1} << 48;
// Score elements B * Hq * Sq * Sk, the product backends size their work by.
constexpr int64_t kMaxScoreElements = int64_t{1} << 56;
// Sequences of a varlen shape: its cu_seqlens arrays are built even to
// explain, and validation and every backend's check() walk them (O(B) each).
// 2^20 took over a second under the sanitizers (fuzzing); real packed batches
// hold thousands.
constexpr int64_t kMaxVarlenBatch = int64_t{1} << 16;

// Decimal digits only (std::stoll would take " +5"), at most kMaxShapeValue.
Status parse_int(const std::string& key, const std::string& value, int64_t* out) {
  int64_t n = 0;
  bool ok = !value.empty() && value.size() <= 10;
  for (char c : value) {
    if (!ok || c < '0' || c > '9') {
      ok = false;
      break;
    }
    n = n * 10 + (c - '0');
  }
  if (!ok || n > kMaxShapeValue) {
    return invalid_argument("shape key " + key + " = " + quote_bounded(value) +
                            " is not an integer in [0, " + std::to_string(kMaxShapeValue) + "]");
  }
  *out = n;
  return Status::Ok();
}

// A finite, non-negative float, the whole value (std::stof stops at "1.5abc").
Status parse_softcap(const std::string& value, float* out) {
  char* end = nullptr;
  errno = 0;
  const float f = value.empty() ? 0.0f : std::strtof(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE ||
      !std::isfinite(f) || f < 0.0f) {
    return invalid_argument("shape key softcap = " + quote_bounded(value) +
                            " is not a finite number >= 0");
  }
  *out = f;
  return Status::Ok();
}

Status parse_flag(const std::string& key, const std::string& value, bool* out) {
  if (value == "1" || value == "true") {
    *out = true;
  } else if (value == "0" || value == "false") {
    *out = false;
  } else {
    return invalid_argument("shape key " + key + " = " + quote_bounded(value) + " must be 0 or 1");
  }
  return Status::Ok();
}

// The products of a parsed shape (`s`, not yet varlen), checked before
// anything is built from it, so no stride or byte count computed later can
// overflow.
Status check_sizes(const AttentionCase& s, bool bias, bool varlen) {
  const std::string shape = "shape " + quote_bounded(s.text) + ": ";
  if (varlen) {
    if (s.batch > kMaxVarlenBatch) {
      return invalid_argument(shape + "varlen B = " + std::to_string(s.batch) +
                              " sequences exceeds the limit of " + std::to_string(kMaxVarlenBatch));
    }
    if (s.batch * std::max(s.sq, s.sk) > INT32_MAX) {  // each <= 2^31: no overflow
      return invalid_argument(
          shape +
          "varlen packs B * max(Sq, Sk) = " + std::to_string(s.batch * std::max(s.sq, s.sk)) +
          " rows, more than int32 cu_seqlens can index (" + std::to_string(INT32_MAX) + ")");
    }
  }
  const int64_t rows_q = s.batch * s.sq, rows_k = s.batch * s.sk;  // each <= 2^62
  struct Count {
    const char* what;
    int64_t elements;  // -1: beyond int64
    int64_t limit;
  };
  const Count counts[] = {
      {"q (B*Sq*Hq*D)", checked_product({rows_q, s.hq, s.d}), kMaxTensorElements},
      {"k (B*Sk*Hkv*D)", checked_product({rows_k, s.hkv, s.d}), kMaxTensorElements},
      {"v (B*Sk*Hkv*Dv)", checked_product({rows_k, s.hkv, s.dv}), kMaxTensorElements},
      {"out (B*Sq*Hq*Dv)", checked_product({rows_q, s.hq, s.dv}), kMaxTensorElements},
      {"bias (Hq*Sq*Sk)", bias ? checked_product({s.hq, s.sq, s.sk}) : 0, kMaxTensorElements},
      {"scores (B*Hq*Sq*Sk)", checked_product({rows_q, s.hq, s.sk}), kMaxScoreElements},
  };
  for (const Count& c : counts) {
    if (c.elements >= 0 && c.elements <= c.limit) continue;
    return invalid_argument(shape + c.what + " has " +
                            (c.elements < 0 ? "more than 2^63" : std::to_string(c.elements)) +
                            " elements, more than the limit of " + std::to_string(c.limit));
  }
  return Status::Ok();
}

}  // namespace

Status parse_case(const std::string& text, AttentionCase* out) {
  AttentionCase spec;
  spec.sq = spec.sk = 128;
  spec.hq = spec.hkv = 8;
  spec.d = 64;
  spec.dv = -1;  // = D unless given
  spec.seed = 1;
  spec.text = text;
  bool bias = false, varlen = false;
  bool mask_window = false;
  int64_t left = -1, right = -1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return invalid_argument("shape item " + quote_bounded(item) + " in " + quote_bounded(text) +
                              " is not KEY=VALUE");
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    int64_t n = 0;
    if (key == "B") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.batch));
    } else if (key == "S") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &n));
      spec.sq = spec.sk = n;
    } else if (key == "Sq") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.sq));
    } else if (key == "Sk") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.sk));
    } else if (key == "H") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &n));
      spec.hq = spec.hkv = n;
    } else if (key == "Hq") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.hq));
    } else if (key == "Hkv") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.hkv));
    } else if (key == "D") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.d));
    } else if (key == "Dv") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.dv));
    } else if (key == "dtype") {
      if (!parse_dtype(value, &spec.dtype)) {
        return invalid_argument("shape key dtype = " + quote_bounded(value) +
                                ": expected f32, bf16 or f16");
      }
    } else if (key == "mask") {
      if (value == "none") {
        spec.mask = Mask::none();
      } else if (value == "causal") {
        spec.mask = Mask::causal();
      } else if (value == "window") {
        mask_window = true;
      } else {
        return invalid_argument("shape key mask = " + quote_bounded(value) +
                                ": expected none, causal or window");
      }
    } else if (key == "window") {
      const size_t colon = value.find(':');
      if (colon == std::string::npos) {
        return invalid_argument("shape key window = " + quote_bounded(value) +
                                ": expected LEFT:RIGHT");
      }
      TESSERA_RETURN_IF_ERROR(parse_int("window left", value.substr(0, colon), &left));
      TESSERA_RETURN_IF_ERROR(parse_int("window right", value.substr(colon + 1), &right));
      mask_window = true;
    } else if (key == "layout") {
      if (value != "bshd" && value != "bhsd") {
        return invalid_argument("shape key layout = " + quote_bounded(value) +
                                ": expected bshd or bhsd");
      }
      spec.layout = value == "bhsd" ? Layout::kBHSD : Layout::kBSHD;
    } else if (key == "lse") {
      TESSERA_RETURN_IF_ERROR(parse_flag(key, value, &spec.lse));
    } else if (key == "bias") {
      TESSERA_RETURN_IF_ERROR(parse_flag(key, value, &bias));
    } else if (key == "varlen") {
      TESSERA_RETURN_IF_ERROR(parse_flag(key, value, &varlen));
    } else if (key == "softcap") {
      TESSERA_RETURN_IF_ERROR(parse_softcap(value, &spec.softcap));
    } else {
      return invalid_argument("unknown shape key " + quote_bounded(key) + " in " +
                              quote_bounded(text) +
                              " (keys: B S Sq Sk H Hq Hkv D Dv dtype mask window layout lse "
                              "bias varlen softcap)");
    }
  }
  if (mask_window) spec.mask = Mask::window(left, right);
  if (spec.dv < 0) spec.dv = spec.d;
  if (spec.batch < 1 || spec.hq < 1 || spec.hkv < 1 || spec.d < 1) {
    return invalid_argument("shape " + quote_bounded(text) + ": B, Hq, Hkv and D must be >= 1");
  }
  TESSERA_RETURN_IF_ERROR(check_sizes(spec, bias, varlen));
  if (bias) spec.bias = BiasKind::kShared;
  if (varlen) {  // B sequences of Sq and Sk rows each
    const auto n = static_cast<size_t>(spec.batch);
    spec.set_varlen(std::vector<int32_t>(n, static_cast<int32_t>(spec.sq)),
                    std::vector<int32_t>(n, static_cast<int32_t>(spec.sk)));
  }
  *out = std::move(spec);
  return Status::Ok();
}

Status parse_case_list(const std::string& text, std::vector<AttentionCase>* out) {
  out->clear();
  size_t start = 0;
  while (start <= text.size()) {
    size_t semi = text.find(';', start);
    if (semi == std::string::npos) semi = text.size();
    const std::string item = text.substr(start, semi - start);
    start = semi + 1;
    if (item.empty()) continue;
    AttentionCase c;
    TESSERA_RETURN_IF_ERROR(parse_case(item, &c));
    out->push_back(std::move(c));
  }
  if (out->empty()) return invalid_argument("no shapes given");
  return Status::Ok();
}

}  // namespace tessera::verify
