// Quantization (include/tessera/quantize.h) against values worked by hand
// with sentence-transformers' rules; the byte-for-byte comparison with
// sentence-transformers itself is tests/python's (data/features).
#include "pipeline/embedding_output.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tessera/quantize.h"

namespace tessera {
namespace {

TEST(Quantize, PrecisionNamesRoundTripAndUnknownOnesAreListed) {
  for (Precision p : {Precision::kFloat32, Precision::kInt8, Precision::kUint8, Precision::kBinary,
                      Precision::kUbinary}) {
    Precision back{};
    ASSERT_TRUE(parse_precision(precision_name(p), "precision", &back).ok());
    EXPECT_EQ(back, p);
  }
  Precision p{};
  const Status s = parse_precision("int4", "embedding_types[1]", &p);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("embedding_types[1] = \"int4\""), std::string::npos);
  EXPECT_NE(s.message().find("float32, int8, uint8, binary, ubinary"), std::string::npos);
}

TEST(Quantize, BinaryPacksSignBitsFirstDimensionHighest) {
  // 10 dims: bits 1 0 1 1 0 0 0 1 | 1 0 -> 0b10110001 = 177, 0b10000000 = 128.
  const std::vector<float> row = {0.5f, -1, 2, 1e-9f, 0, -0.f, -3, 4, 0.1f, -0.1f};
  std::vector<uint8_t> out;
  ASSERT_TRUE(quantize_embeddings(row.data(), 1, 10, Precision::kUbinary, {}, &out).ok());
  EXPECT_EQ(out, (std::vector<uint8_t>{177, 128}));
  ASSERT_TRUE(quantize_embeddings(row.data(), 1, 10, Precision::kBinary, {}, &out).ok());
  // int8(177 - 128) = 49, int8(128 - 128) = 0.
  EXPECT_EQ(static_cast<int8_t>(out[0]), 49);
  EXPECT_EQ(static_cast<int8_t>(out[1]), 0);
  EXPECT_EQ(quantized_row_bytes(Precision::kBinary, 10), 2);
  EXPECT_EQ(quantized_row_bytes(Precision::kUbinary, 384), 48);
}

TEST(Quantize, Int8BucketsFollowTheRanges) {
  // One dimension over [-1, 1]: step 2/255 in float32 rounds up, so x = 1
  // gives floor(254.99998) = 254 (sentence-transformers gives 254 too);
  // -1 -> 0, 0 -> floor(127.5) = 127, beyond the range clamps.
  const std::vector<float> ranges = {-1, 1};
  const std::vector<float> x = {-1, 1, 0, 5, -5};
  std::vector<uint8_t> out;
  ASSERT_TRUE(quantize_embeddings(x.data(), 5, 1, Precision::kUint8, ranges, &out).ok());
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 254, 127, 255, 0}));
  ASSERT_TRUE(quantize_embeddings(x.data(), 5, 1, Precision::kInt8, ranges, &out).ok());
  std::vector<int> as_int8;
  for (uint8_t b : out) as_int8.push_back(static_cast<int8_t>(b));
  EXPECT_EQ(as_int8, (std::vector<int>{-128, 126, -1, 127, -128}));
  // A constant dimension (min == max) has step 1, as sentence-transformers.
  const std::vector<float> flat = {0.25f, 0.25f};
  ASSERT_TRUE(quantize_embeddings(x.data(), 1, 1, Precision::kUint8, flat, &out).ok());
  EXPECT_EQ(out[0], 0);
}

TEST(Quantize, RangesComeFromTwoOrMoreRowsAndAreChecked) {
  const std::vector<float> rows = {1, -2, 3, 4, 0, -1};  // 3 rows x 2 dims
  std::vector<float> ranges;
  ASSERT_TRUE(quantization_ranges(rows.data(), 3, 2, &ranges).ok());
  EXPECT_EQ(ranges, (std::vector<float>{0, -2, 3, 4}));
  EXPECT_EQ(quantization_ranges(rows.data(), 1, 2, &ranges).code(), StatusCode::kInvalidArgument);
  std::vector<uint8_t> out;
  EXPECT_EQ(quantize_embeddings(rows.data(), 3, 2, Precision::kInt8, {0, 1}, &out).code(),
            StatusCode::kInvalidArgument);  // wrong size
  EXPECT_EQ(quantize_embeddings(rows.data(), 3, 2, Precision::kInt8, {1, 0, 0, 1}, &out).code(),
            StatusCode::kInvalidArgument);  // max < min
  const std::vector<float> nan = {std::numeric_limits<float>::quiet_NaN(), 0};
  const Status s = quantize_embeddings(nan.data(), 1, 2, Precision::kBinary, {}, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("embeddings[0][0]"), std::string::npos) << s.message();
}

TEST(Dimensions, ShortenKeepsTheFirstValuesAndRenormalises) {
  std::vector<float> rows = {3, 4, 12, 0, 0, 5};  // 2 rows x 3
  pipeline::shorten_rows(rows.data(), 2, 3, 2, true);
  EXPECT_FLOAT_EQ(rows[0], 0.6f);
  EXPECT_FLOAT_EQ(rows[1], 0.8f);
  EXPECT_FLOAT_EQ(rows[2], 0.f);  // a zero row stays zero
  EXPECT_FLOAT_EQ(rows[3], 0.f);
  EXPECT_TRUE(pipeline::check_dimensions(3, 3, "dimensions").ok());
  const Status s = pipeline::check_dimensions(0, 3, "--dimensions");
  EXPECT_NE(s.message().find("--dimensions = 0: must be in [1, 3]"), std::string::npos);
}

TEST(EmbeddingOutput, AllFiniteRefusesNaNAndInfinity) {
  const float ok[] = {1, 2};
  const float nan[] = {1, std::numeric_limits<float>::quiet_NaN()};
  const float inf[] = {std::numeric_limits<float>::infinity()};
  EXPECT_TRUE(pipeline::all_finite(ok, 2));
  EXPECT_FALSE(pipeline::all_finite(nan, 2));
  EXPECT_FALSE(pipeline::all_finite(inf, 1));
  EXPECT_TRUE(pipeline::all_finite(nan, 1));  // only the first n values count
}

}  // namespace
}  // namespace tessera
