// Quantized embeddings, with sentence-transformers' quantize_embeddings
// semantics (what vector databases store to cut memory 4-32x):
//  - int8 / uint8: per dimension, [min, max] of a calibration set cut into
//    255 steps; q = clamp(floor((x - min) / step), 0, 255), minus 128 for
//    int8 (a dimension with min == max has step 1).
//  - binary / ubinary: the sign bits (x > 0) packed 8 per byte, the first
//    dimension in the highest bit (numpy.packbits); binary stores each byte
//    minus 128 as int8.
//  - float32: the floats' own bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/status.h"

namespace tessera {

enum class Precision { kFloat32, kInt8, kUint8, kBinary, kUbinary };

const char* precision_name(Precision p);  // "float32", "int8", "uint8", "binary", "ubinary"
// The error names `field` and lists the accepted names.
Status parse_precision(std::string_view name, const std::string& field, Precision* out);
// Bytes of one quantized row of `dims` dimensions: 4 * dims, dims, or
// ceil(dims / 8) for the packed bits.
int64_t quantized_row_bytes(Precision p, int64_t dims);
bool is_signed(Precision p);  // int8 and binary are int8 values; uint8 and ubinary uint8

// The ranges int8 / uint8 need: 2 x dims floats, the per-dimension minimum
// (row 0) and maximum (row 1) of `rows` (n x dims, n >= 2, all finite).
Status quantization_ranges(const float* rows, int64_t n, int64_t dims, std::vector<float>* ranges);

// n x dims floats -> n x quantized_row_bytes(p, dims) bytes in *out.
// `ranges` (2 x dims, min <= max, finite) is used by int8 / uint8 and must be
// given for them; the other precisions ignore it. Non-finite inputs are
// refused naming the row and dimension.
Status quantize_embeddings(const float* rows, int64_t n, int64_t dims, Precision p,
                           const std::vector<float>& ranges, std::vector<uint8_t>* out);

}  // namespace tessera
