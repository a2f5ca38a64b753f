// format_embedding_row: the CLI's JSONL rows for front ends that write their
// own (tessera.ray), checked against the text `tessera embed` writes.
#include "tessera/embedding_rows.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace tessera {
namespace {

EmbeddingRowFields fields(std::string id_json, int64_t chunk, int64_t chunks) {
  EmbeddingRowFields f;
  f.id_json = std::move(id_json);
  f.chunk = chunk;
  f.chunks = chunks;
  f.begin = 3;
  f.end = 17;
  return f;
}

TEST(EmbeddingRowsTest, FloatRowsAreTheClisShortestRoundTripText) {
  const float values[3] = {0.5F, -1.25F, 0.1F};
  std::string line;
  ASSERT_TRUE(
      format_embedding_row(fields("\"doc-1\"", 2, 0), Precision::kFloat32, values, 3, &line).ok());
  EXPECT_EQ(line, R"({"id":"doc-1","chunk":2,"offsets":[3,17],"embedding":[0.5,-1.25,0.1]})");
  // A document row (--doc-embedding) and a numeric id.
  ASSERT_TRUE(format_embedding_row(fields("7", 0, 4), Precision::kFloat32, values, 2, &line).ok());
  EXPECT_EQ(line, R"({"id":7,"chunks":4,"offsets":[3,17],"embedding":[0.5,-1.25]})");
}

TEST(EmbeddingRowsTest, QuantizedRowsNameTheirPrecisionAndWriteIntegers) {
  const uint8_t bytes[2] = {0x80, 0x7f};
  std::string line;
  ASSERT_TRUE(format_embedding_row(fields("\"é\"", 0, 0), Precision::kInt8, bytes, 2, &line).ok());
  EXPECT_EQ(line,
            R"({"id":"é","chunk":0,"offsets":[3,17],"precision":"int8","embedding":[-128,127]})");
  // ubinary: ceil(9 / 8) = 2 packed bytes for 9 dimensions, as uint8.
  ASSERT_TRUE(
      format_embedding_row(fields("\"a\"", 1, 0), Precision::kUbinary, bytes, 9, &line).ok());
  EXPECT_EQ(line,
            R"({"id":"a","chunk":1,"offsets":[3,17],"precision":"ubinary","embedding":[128,127]})");
}

TEST(EmbeddingRowsTest, AnIdThatIsNotAStringOrNumberIsRefusedByName) {
  const float values[1] = {1.0F};
  std::string line = "untouched";
  for (const char* bad : {"[1]", "{\"a\":1}", "not json", "", "null", "true"}) {
    const Status s = format_embedding_row(fields(bad, 0, 0), Precision::kFloat32, values, 1, &line);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("id_json = '" + std::string(bad) + "'"), std::string::npos)
        << s.message();
  }
  EXPECT_FALSE(format_embedding_row(fields("1", 0, 0), Precision::kFloat32, values, 0, &line).ok());
  EXPECT_EQ(line, "untouched");
}

}  // namespace
}  // namespace tessera
