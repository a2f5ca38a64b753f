// Issue 32's features against sentence-transformers itself:
// data/features/expected.json (tools/make_feature_oracle.py, torch f32).
// Quantization is checked byte for byte on the oracle's own float inputs;
// prompts and Matryoshka dimensions through the Embedder, by cosine.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessera/embedder.h"
#include "tessera/quantize.h"

namespace tessera {
namespace {

using nlohmann::json;

const json& oracle() {
  static const json j = [] {
    std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/data/features/expected.json");
    return json::parse(in);
  }();
  return j;
}

std::vector<float> flat_floats(const json& rows) {
  std::vector<float> out;
  for (const json& r : rows) {
    for (const json& v : r) out.push_back(v.get<float>());
  }
  return out;
}

// The case's values as the bytes a numpy array of its dtype holds.
std::vector<uint8_t> flat_bytes(const json& c) {
  std::vector<uint8_t> out;
  for (const json& r : c.at("values")) {
    for (const json& v : r) out.push_back(static_cast<uint8_t>(v.get<int>()));
  }
  return out;
}

const json& truncate_case(int dim) {
  for (const json& c : oracle().at("minilm").at("truncate_dim")) {
    if (c.at("dim") == dim && c.at("normalize_embeddings") == true) return c;
  }
  ADD_FAILURE() << "no truncate_dim case " << dim;
  static const json kNone;
  return kNone;
}

TEST(FeatureOracle, QuantizationMatchesSentenceTransformersByteForByte) {
  const json& q = oracle().at("quantization");
  const std::vector<float> e = flat_floats(oracle().at("minilm").at("float32").at("rows"));
  const std::vector<float> e383 = flat_floats(truncate_case(383).at("rows"));
  const std::vector<float> r = flat_floats(q.at("calibration").at("ranges").at("rows"));
  int checked = 0;
  for (const json& c : q.at("cases")) {
    const std::string name = c.at("name");
    if (!c.contains("values") || name.rfind("encode_", 0) == 0) continue;  // end to end: below
    Precision p{};
    std::string precision = name.substr(0, name.find('_'));
    ASSERT_TRUE(parse_precision(precision, "case", &p).ok()) << name;
    const bool short_rows = name.find("dim383") != std::string::npos;
    const std::vector<float>& rows = short_rows ? e383 : e;
    const int64_t dims = short_rows ? 383 : 384;
    const int64_t n = static_cast<int64_t>(rows.size()) / dims;
    std::vector<float> ranges;
    if (p == Precision::kInt8 || p == Precision::kUint8) {
      if (c.contains("ranges")) {
        ranges = flat_floats(c.at("ranges").at("rows"));
      } else if (c.contains("calibration_embeddings")) {
        const std::vector<float> cal = flat_floats(c.at("calibration_embeddings").at("rows"));
        ASSERT_TRUE(
            quantization_ranges(cal.data(), static_cast<int64_t>(cal.size()) / dims, dims, &ranges)
                .ok());
      } else if (name.find("_ranges") != std::string::npos) {
        ranges = r;
      } else {
        ASSERT_TRUE(quantization_ranges(rows.data(), n, dims, &ranges).ok());
      }
    }
    std::vector<uint8_t> out;
    ASSERT_TRUE(quantize_embeddings(rows.data(), n, dims, p, ranges, &out).ok()) << name;
    EXPECT_EQ(out, flat_bytes(c)) << name;
    ++checked;
  }
  EXPECT_GE(checked, 9);  // int8, uint8, binary, ubinary, two with R, c6, degenerate, dim383 x2
}

double cosine(const float* a, const float* b, int n) {
  double ab = 0, aa = 0, bb = 0;
  for (int i = 0; i < n; ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

class FeatureOracleModel : public ::testing::Test {
 protected:
  void load(const std::string& dir) {
    RuntimeOptions rt;
    rt.threads = 2;
    rt.tuning = "none";
    ASSERT_TRUE(Runtime::create(rt, &runtime_).ok());
    EmbedderOptions options;
    options.model_dir = std::string(TESSERA_SOURCE_DIR) + "/" + dir;
    const Status s = Embedder::load(*runtime_, options, &embedder_);
    ASSERT_TRUE(s.ok()) << s.to_string();
    for (const json& t : oracle().at("texts")) texts_.push_back(t.at("text"));
  }
  void TearDown() override {
    embedder_.reset();
    if (runtime_) {
      EXPECT_EQ(runtime_->context().allocator().live_bytes(), 0u);
    }
  }
  // Every row of ours within cosine 0.9999 of the oracle's, and as long.
  void expect_rows(const EmbedOptions& options, const json& expected, const std::string& what) {
    std::vector<float> rows;
    const Status s = embedder_->embed(texts_, options, &rows);
    ASSERT_TRUE(s.ok()) << what << ": " << s.to_string();
    const std::vector<float> want = flat_floats(expected);
    ASSERT_EQ(rows.size(), want.size()) << what;
    const int dims = static_cast<int>(rows.size() / texts_.size());
    for (size_t i = 0; i < texts_.size(); ++i) {
      const float* a = rows.data() + i * dims;
      const float* b = want.data() + i * dims;
      EXPECT_GE(cosine(a, b, dims), 0.9999) << what << " text " << i;
      double na = 0, nb = 0;
      for (int d = 0; d < dims; ++d) {
        na += double(a[d]) * a[d];
        nb += double(b[d]) * b[d];
      }
      EXPECT_NEAR(std::sqrt(na), std::sqrt(nb), 1e-4) << what << " text " << i;
    }
  }
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<Embedder> embedder_;
  std::vector<std::string> texts_;
};

TEST_F(FeatureOracleModel, MatryoshkaDimensionsAndPromptsOnTheDefaultModel) {
  load("models/all-MiniLM-L6-v2");
  for (int dims : {32, 128, 383}) {
    EmbedOptions options;
    options.truncate = true;
    options.dimensions = dims;
    expect_rows(options, truncate_case(dims).at("rows"), "dimensions " + std::to_string(dims));
  }
  const json& prompt = oracle().at("minilm").at("prompt");
  EmbedOptions options;
  options.truncate = true;  // the long text: the prompt's tokens count toward 256
  options.prompt = prompt.at("prompt").get<std::string>();
  expect_rows(options, prompt.at("rows"), "prompt");
}

TEST_F(FeatureOracleModel, QueryAndDocumentPromptsOfQwen3) {
  load("data/models/tiny-qwen3");
  const json& qwen = oracle().at("tiny_qwen3");
  EmbedOptions query;
  query.prompt_name = qwen.at("encode_query").at("prompt_name").get<std::string>();
  expect_rows(query, qwen.at("encode_query").at("rows"), "encode_query");
  EmbedOptions document;
  document.prompt_name = qwen.at("encode_document").at("prompt_name").get<std::string>();
  expect_rows(document, qwen.at("encode_document").at("rows"), "encode_document");
  query.dimensions = 8;
  expect_rows(query, qwen.at("query_truncate_dim_8").at("rows"), "query, 8 dimensions");
}

}  // namespace
}  // namespace tessera
