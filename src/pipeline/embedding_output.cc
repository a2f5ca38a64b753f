#include "pipeline/embedding_output.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tessera/quantize.h"

namespace tessera {

namespace {

constexpr Precision kPrecisions[] = {Precision::kFloat32, Precision::kInt8, Precision::kUint8,
                                     Precision::kBinary, Precision::kUbinary};

Status check_finite(const float* rows, int64_t n, int64_t dims, const char* what) {
  for (int64_t i = 0; i < n * dims; ++i) {
    if (!std::isfinite(rows[i])) {
      return invalid_argument(std::string(what) + "[" + std::to_string(i / dims) + "][" +
                              std::to_string(i % dims) + "] is " + std::to_string(rows[i]) +
                              ": only finite values can be quantized");
    }
  }
  return Status::Ok();
}

}  // namespace

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kFloat32:
      return "float32";
    case Precision::kInt8:
      return "int8";
    case Precision::kUint8:
      return "uint8";
    case Precision::kBinary:
      return "binary";
    case Precision::kUbinary:
      return "ubinary";
  }
  return "?";
}

Status parse_precision(std::string_view name, const std::string& field, Precision* out) {
  std::string names;
  for (Precision p : kPrecisions) {
    if (name == precision_name(p)) {
      *out = p;
      return Status::Ok();
    }
    names += (names.empty() ? "" : ", ") + std::string(precision_name(p));
  }
  return invalid_argument(field + " = \"" + std::string(name.substr(0, 64)) +
                          "\" is not a precision; expected one of " + names);
}

int64_t quantized_row_bytes(Precision p, int64_t dims) {
  switch (p) {
    case Precision::kFloat32:
      return dims * 4;
    case Precision::kInt8:
    case Precision::kUint8:
      return dims;
    case Precision::kBinary:
    case Precision::kUbinary:
      return (dims + 7) / 8;
  }
  return 0;
}

bool is_signed(Precision p) { return p == Precision::kInt8 || p == Precision::kBinary; }

Status quantization_ranges(const float* rows, int64_t n, int64_t dims, std::vector<float>* ranges) {
  if (n < 2) {
    return invalid_argument(
        "int8 / uint8 ranges cannot come from " + std::to_string(n) +
        " embedding(s): give ranges (2 x dims: per-dimension min and max) or calibration "
        "embeddings from a representative set");
  }
  TESSERA_RETURN_IF_ERROR(check_finite(rows, n, dims, "embeddings"));
  ranges->assign(rows, rows + dims);
  ranges->insert(ranges->end(), rows, rows + dims);
  float* lo = ranges->data();
  float* hi = lo + dims;
  for (int64_t i = 1; i < n; ++i) {
    const float* r = rows + i * dims;
    for (int64_t d = 0; d < dims; ++d) {
      lo[d] = std::min(lo[d], r[d]);
      hi[d] = std::max(hi[d], r[d]);
    }
  }
  return Status::Ok();
}

Status quantize_embeddings(const float* rows, int64_t n, int64_t dims, Precision p,
                           const std::vector<float>& ranges, std::vector<uint8_t>* out) {
  TESSERA_RETURN_IF_ERROR(check_finite(rows, n, dims, "embeddings"));
  const int64_t width = quantized_row_bytes(p, dims);
  out->assign(static_cast<size_t>(n * width), 0);
  uint8_t* dst = out->data();
  if (p == Precision::kFloat32) {
    if (n > 0) std::memcpy(dst, rows, static_cast<size_t>(n * width));
    return Status::Ok();
  }
  if (p == Precision::kBinary || p == Precision::kUbinary) {
    const uint8_t offset = p == Precision::kBinary ? 128 : 0;
    for (int64_t i = 0; i < n; ++i) {
      const float* r = rows + i * dims;
      uint8_t* o = dst + i * width;
      for (int64_t d = 0; d < dims; ++d) {
        if (r[d] > 0) o[d / 8] |= static_cast<uint8_t>(0x80u >> (d % 8));
      }
      // int8(packed - 128) has the bits of packed - 128 modulo 256.
      for (int64_t b = 0; b < width; ++b) o[b] = static_cast<uint8_t>(o[b] - offset);
    }
    return Status::Ok();
  }
  if (static_cast<int64_t>(ranges.size()) != 2 * dims) {
    return invalid_argument(std::string(precision_name(p)) + " needs ranges of 2 x " +
                            std::to_string(dims) + " values (per-dimension min, then max); got " +
                            std::to_string(ranges.size()));
  }
  TESSERA_RETURN_IF_ERROR(check_finite(ranges.data(), 2, dims, "ranges"));
  // In float32 throughout, as numpy computes it for float32 inputs, so every
  // bucket boundary falls where sentence-transformers puts it.
  std::vector<float> steps(static_cast<size_t>(dims));
  for (int64_t d = 0; d < dims; ++d) {
    if (ranges[dims + d] < ranges[d]) {
      return invalid_argument("ranges[1][" + std::to_string(d) + "] (max) < ranges[0][" +
                              std::to_string(d) + "] (min)");
    }
    const float step = (ranges[dims + d] - ranges[d]) / 255.0F;
    steps[d] = step == 0.0F ? 1.0F : step;
  }
  const int shift = p == Precision::kInt8 ? 128 : 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* r = rows + i * dims;
    uint8_t* o = dst + i * width;
    for (int64_t d = 0; d < dims; ++d) {
      const float q = std::clamp(std::floor((r[d] - ranges[d]) / steps[d]), 0.0F, 255.0F);
      o[d] = static_cast<uint8_t>(static_cast<int>(q) - shift);
    }
  }
  return Status::Ok();
}

namespace pipeline {

Status check_dimensions(int64_t dimensions, int model_dim, const std::string& field) {
  if (dimensions < 1 || dimensions > model_dim) {
    return invalid_argument(field + " = " + std::to_string(dimensions) + ": must be in [1, " +
                            std::to_string(model_dim) + "] (the model outputs " +
                            std::to_string(model_dim) +
                            " dimensions; fewer keep the first ones and re-normalise)");
  }
  return Status::Ok();
}

void shorten_rows(float* rows, int64_t n, int dim, int dims, bool renormalize) {
  for (int64_t i = 0; i < n; ++i) {
    float* dst = rows + i * dims;
    if (dims != dim) std::memmove(dst, rows + i * dim, static_cast<size_t>(dims) * sizeof(float));
    if (!renormalize) continue;
    double sum = 0;
    for (int d = 0; d < dims; ++d) sum += static_cast<double>(dst[d]) * dst[d];
    if (sum <= 0) continue;
    const auto inv = static_cast<float>(1.0 / std::sqrt(sum));
    for (int d = 0; d < dims; ++d) dst[d] *= inv;
  }
}

bool all_finite(const float* values, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(values[i])) return false;
  }
  return true;
}

}  // namespace pipeline
}  // namespace tessera
