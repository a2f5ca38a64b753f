#include "pipeline/embedding_writer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "temp_dir.h"
#include "tessera/quantize.h"

namespace tessera::pipeline {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

size_t count_files(const std::string& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(EmbeddingWriter, FormatRowHasTheSchemaAndRoundTripsFloats) {
  const nlohmann::json id = "d\xC3\xA9";
  const float e[3] = {0.1f, -1.0e-7f, 0.33333334f};
  const auto row = nlohmann::json::parse(format_row({&id, 2, 0, 5, 9}, e, 3));
  EXPECT_EQ(row["id"], "d\xC3\xA9");
  EXPECT_EQ(row["chunk"], 2);
  EXPECT_FALSE(row.contains("chunks"));
  EXPECT_EQ(row["offsets"], nlohmann::json::array({5, 9}));
  ASSERT_EQ(row["embedding"].size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(row["embedding"][i].get<float>(), e[i]);
  const nlohmann::json num = 12;
  const auto doc = nlohmann::json::parse(format_row({&num, 0, 4, 0, 100}, nullptr, 3, 7));
  EXPECT_EQ(doc["id"], 12);
  EXPECT_EQ(doc["chunks"], 4);
  EXPECT_FALSE(doc.contains("chunk"));
  EXPECT_FALSE(doc.contains("embedding"));
  EXPECT_EQ(doc["row"], 7);
}

TEST(EmbeddingWriter, JsonlFileAppearsOnlyOnFinish) {
  TempDir dir;
  const std::string path = dir.path() + "/out.jsonl";
  const nlohmann::json id = "a";
  const float e[2] = {1.0f, 0.0f};
  {
    std::unique_ptr<EmbeddingWriter> w;
    ASSERT_TRUE(make_jsonl_writer(path, 2, &w).ok());
    ASSERT_TRUE(w->write({&id, 0, 0, 0, 1}, e).ok());
    EXPECT_FALSE(fs::exists(path));
    ASSERT_TRUE(w->finish().ok());
  }
  std::istringstream lines(slurp(path));
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(nlohmann::json::parse(line)["embedding"], nlohmann::json::array({1.0, 0.0}));
    ++n;
  }
  EXPECT_EQ(n, 1);
  EXPECT_EQ(count_files(dir.path()), 1u);  // no temp file left
}

TEST(EmbeddingWriter, AbandonedWriterLeavesNothing) {
  TempDir dir;
  const nlohmann::json id = "a";
  const float e[2] = {1.0f, 0.0f};
  {
    std::unique_ptr<EmbeddingWriter> jsonl, npy;
    ASSERT_TRUE(make_jsonl_writer(dir.path() + "/x.jsonl", 2, &jsonl).ok());
    ASSERT_TRUE(make_npy_writer(dir.path() + "/x.npy", 2, &npy).ok());
    ASSERT_TRUE(jsonl->write({&id, 0, 0, 0, 1}, e).ok());
    ASSERT_TRUE(npy->write({&id, 0, 0, 0, 1}, e).ok());
    EXPECT_EQ(count_files(dir.path()), 3u);  // the temp files
  }
  EXPECT_EQ(count_files(dir.path()), 0u);
}

TEST(EmbeddingWriter, NpyHasShapeDataAndAnIndex) {
  TempDir dir;
  const std::string path = dir.path() + "/emb.npy";
  EXPECT_EQ(npy_index_path(path), dir.path() + "/emb.index.jsonl");
  EXPECT_EQ(npy_index_path("out.bin"), "out.bin.index.jsonl");
  const nlohmann::json ids[3] = {"a", 5, "c"};
  std::unique_ptr<EmbeddingWriter> w;
  ASSERT_TRUE(make_npy_writer(path, 3, &w).ok());
  for (int r = 0; r < 3; ++r) {
    const float e[3] = {static_cast<float>(r), 0.5f, -2.0f};
    ASSERT_TRUE(w->write({&ids[r], r, 0, int64_t{r} * 10, int64_t{r} * 10 + 4}, e).ok());
  }
  ASSERT_TRUE(w->finish().ok());
  const std::string bytes = slurp(path);
  ASSERT_EQ(bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)), 0);
  const size_t header_len =
      static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  const size_t data_start = 10 + header_len;
  EXPECT_EQ(data_start % 64, 0u);
  const std::string header = bytes.substr(10, header_len);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  EXPECT_NE(header.find("'shape': (3, 3)"), std::string::npos) << header;
  EXPECT_EQ(header.back(), '\n');
  ASSERT_EQ(bytes.size(), data_start + 9 * sizeof(float));
  float data[9];
  std::memcpy(data, bytes.data() + data_start, sizeof data);
  EXPECT_EQ(data[3], 1.0f);
  EXPECT_EQ(data[7], 0.5f);
  std::istringstream index(slurp(npy_index_path(path)));
  std::string line;
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(std::getline(index, line));
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["id"], ids[r]);
    EXPECT_EQ(j["row"], r);
    EXPECT_EQ(j["chunk"], r);
    EXPECT_EQ(j["offsets"][0], r * 10);
  }
  EXPECT_FALSE(std::getline(index, line));
  std::unique_ptr<EmbeddingWriter> to_stdout;
  EXPECT_FALSE(make_npy_writer("", 3, &to_stdout).ok());
}

// The .npy header's dict (after the magic and the length field).
std::string quantized_npy_header(const std::string& bytes) {
  const size_t header_len =
      static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  return bytes.substr(10, header_len);
}

TEST(EmbeddingWriter, QuantizedJsonlRowsNameThePrecisionAndHoldIntegers) {
  const nlohmann::json id = "q";
  const uint8_t int8_bytes[3] = {0x80, 0x00, 0x7f};  // -128, 0, 127
  const auto row = nlohmann::json::parse(
      format_quantized_row({&id, 1, 0, 0, 4}, Precision::kInt8, int8_bytes, 3));
  EXPECT_EQ(row["precision"], "int8");
  EXPECT_EQ(row["chunk"], 1);
  EXPECT_EQ(row["embedding"], nlohmann::json::array({-128, 0, 127}));
  const uint8_t bits[2] = {0xff, 0x80};  // 10 dimensions: 2 bytes
  const auto ub =
      nlohmann::json::parse(format_quantized_row({&id, 0, 2, 0, 4}, Precision::kUbinary, bits, 10));
  EXPECT_EQ(ub["precision"], "ubinary");
  EXPECT_EQ(ub["chunks"], 2);
  EXPECT_EQ(ub["embedding"], nlohmann::json::array({255, 128}));

  // The writer quantizes what it is given: float rows in, integer rows out.
  TempDir dir;
  const std::string path = dir.path() + "/q.jsonl";
  WriterOptions options;
  options.encoding = {Precision::kBinary, {}};
  std::unique_ptr<EmbeddingWriter> w;
  ASSERT_TRUE(make_jsonl_writer(path, 10, &w, options).ok());
  const float e[10] = {1, -1, 1, -1, 1, -1, 1, -1, 0.5f, -0.5f};
  ASSERT_TRUE(w->write({&id, 0, 0, 0, 4}, e).ok());
  ASSERT_TRUE(w->finish().ok());
  const auto written = nlohmann::json::parse(slurp(path));
  // 0b10101010 - 128 = 42; 0b10000000 - 128 = 0.
  EXPECT_EQ(written["embedding"], nlohmann::json::array({42, 0}));
  EXPECT_EQ(written["precision"], "binary");
}

TEST(EmbeddingWriter, QuantizedNpyHasTheDtypeAndShapeOfEachPrecision) {
  TempDir dir;
  const nlohmann::json id = "q";
  const int dim = 10;
  std::vector<float> rows(size_t{2} * dim);
  for (int i = 0; i < 2 * dim; ++i) rows[i] = static_cast<float>((i * 7) % 11) / 5.0f - 1.0f;
  std::vector<float> ranges;
  ASSERT_TRUE(quantization_ranges(rows.data(), 2, dim, &ranges).ok());
  const struct {
    Precision p;
    const char* descr;
    int values;
  } cases[] = {{Precision::kInt8, "|i1", dim},
               {Precision::kUint8, "|u1", dim},
               {Precision::kBinary, "|i1", 2},
               {Precision::kUbinary, "|u1", 2},
               {Precision::kFloat32, "<f4", dim}};
  for (const auto& c : cases) {
    SCOPED_TRACE(precision_name(c.p));
    const std::string path = dir.path() + "/" + precision_name(c.p) + ".npy";
    WriterOptions options;
    options.encoding = {c.p, ranges};
    std::unique_ptr<EmbeddingWriter> w;
    ASSERT_TRUE(make_npy_writer(path, dim, &w, options).ok());
    for (int r = 0; r < 2; ++r)
      ASSERT_TRUE(w->write({&id, r, 0, 0, 1}, &rows[size_t{dim} * r]).ok());
    ASSERT_TRUE(w->finish().ok());
    const std::string bytes = slurp(path);
    const std::string header = quantized_npy_header(bytes);
    EXPECT_NE(header.find(std::string("'descr': '") + c.descr + "'"), std::string::npos) << header;
    EXPECT_NE(header.find("'shape': (2, " + std::to_string(c.values) + ")"), std::string::npos)
        << header;
    std::vector<uint8_t> expected;
    ASSERT_TRUE(quantize_embeddings(rows.data(), 2, dim, c.p, ranges, &expected).ok());
    ASSERT_EQ(bytes.size(), 10 + header.size() + expected.size());
    EXPECT_EQ(bytes.substr(10 + header.size()),
              std::string(reinterpret_cast<const char*>(expected.data()), expected.size()));
  }
}

TEST(EmbeddingWriter, QuantizedWritersRefuseRangesOfAnotherSize) {
  TempDir dir;
  WriterOptions options;
  options.encoding = {Precision::kInt8, {}};
  std::unique_ptr<EmbeddingWriter> w;
  Status s = make_npy_writer(dir.path() + "/x.npy", 4, &w, options);
  EXPECT_NE(s.message().find("ranges of 2 x 4 values"), std::string::npos) << s.message();
  options.encoding.ranges.assign(6, 0.0f);
  s = make_jsonl_writer(dir.path() + "/x.jsonl", 4, &w, options);
  EXPECT_NE(s.message().find("got 6"), std::string::npos) << s.message();
  EXPECT_EQ(count_files(dir.path()), 0u);
}

TEST(EmbeddingWriter, ResumedQuantizedNpyCountsItsOwnRowBytes) {
  TempDir dir;
  const std::string path = dir.path() + "/bits.npy";
  const nlohmann::json id = "q";
  const float e[12] = {1, -1, 1, -1, 1, -1, 1, -1, 1, 1, 1, 1};
  WriterOptions options;
  options.resumable = true;
  options.encoding = {Precision::kUbinary, {}};
  OutputPosition at;
  {
    std::unique_ptr<EmbeddingWriter> w;
    ASSERT_TRUE(make_npy_writer(path, 12, &w, options).ok());
    ASSERT_TRUE(w->write({&id, 0, 0, 0, 1}, e).ok());
    ASSERT_TRUE(w->write({&id, 1, 0, 0, 1}, e).ok());
    ASSERT_TRUE(w->sync(&at).ok());
  }
  EXPECT_EQ(at.rows, 2);
  EXPECT_EQ(at.bytes, 128 + 2 * 2);  // the header, then 2 bytes of bits per row
  // A float32 writer would expect 48 bytes a row: that position does not fit.
  options.resume_at = at;
  options.encoding = {};
  std::unique_ptr<EmbeddingWriter> w;
  const Status s = make_npy_writer(path, 12, &w, options);
  EXPECT_NE(s.message().find("does not fit a .npy of dim 12 float32 rows"), std::string::npos)
      << s.message();
  options.encoding = {Precision::kUbinary, {}};
  ASSERT_TRUE(make_npy_writer(path, 12, &w, options).ok());
  ASSERT_TRUE(w->write({&id, 2, 0, 0, 1}, e).ok());
  ASSERT_TRUE(w->finish().ok());
  const std::string bytes = slurp(path);
  EXPECT_NE(quantized_npy_header(bytes).find("'shape': (3, 2)"), std::string::npos);
  EXPECT_EQ(bytes.size(), 128u + 3 * 2);
  EXPECT_EQ(static_cast<unsigned char>(bytes[128 + 4]), 0xaa);
  EXPECT_EQ(static_cast<unsigned char>(bytes[128 + 5]), 0xf0);
}

}  // namespace
}  // namespace tessera::pipeline
