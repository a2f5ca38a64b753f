// Every architecture and head against HF transformers' own classes: the tiny
// random models of data/models (tools/make_tiny_models.py; README there)
// hold what transformers / sentence-transformers compute in torch f32. For
// each folder and each CPU attention backend forced in turn, the suite
// requires: last hidden state max abs error <= 1e-4, pooled embedding
// cosine >= 0.99999, classification logits abs error <= 1e-4, SPLADE values
// abs error <= 1e-4 with the same nonzero set above 1e-3. The committed
// token ids feed the encoder, so encoder and tokenizer errors stay apart;
// the tokenizer is checked on the same texts too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "model/encoder.h"
#include "model_test_util.h"
#include "tessera/registry.h"
#include "tiny_model_list.h"

namespace tessera::model {
namespace {

constexpr double kMaxHiddenError = 1e-4;
constexpr double kMinPooledCosine = 0.99999;
constexpr double kMaxScoreError = 1e-4;
constexpr double kSparseThreshold = 1e-3;

using nlohmann::json;
using testing::cosine;
using Ids = std::vector<std::vector<int32_t>>;

std::string folder(const std::string& name) {
  return std::string(TESSERA_SOURCE_DIR) + "/data/models/" + name;
}

json read_expected(const std::string& name) {
  std::ifstream in(folder(name) + "/expected.json");
  EXPECT_TRUE(in.good()) << folder(name) << "/expected.json";
  return json::parse(in);
}

// The worst errors over one folder, for the log line CONFORMANCE.md quotes.
struct Worst {
  double hidden = 0, score = 0, sparse = 0, cosine = 1;
};

class Architectures : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    const Status st = Encoder::load(folder(GetParam()), {}, ctx_, &encoder_);
    ASSERT_TRUE(st.ok()) << st.to_string();
    expected_ = read_expected(GetParam());
    register_builtin_backends(registry_);
  }

  // Every available CPU backend of the encoder's attention dtype. Under
  // sanitizers not xla: its PJRT plugin is not instrumented (as in the
  // conformance suite, scripts/sanitize.sh) and compiling its programs was
  // the bulk of these tests' time there; the release suite runs it.
  std::vector<Policy> cpu_backends() {
    std::vector<Policy> out;
    const bool sanitized = std::getenv("TESSERA_TEST_SANITIZED") != nullptr;
    for (Backend* b : registry_.backends()) {
      if (b->device().kind != DeviceKind::kCpu || !b->availability().available) continue;
      if (sanitized && b->name() == std::string_view("xla")) continue;
      const auto& dtypes = b->capabilities().dtypes;
      if (std::find(dtypes.begin(), dtypes.end(), encoder_->attention_dtype()) == dtypes.end()) {
        continue;
      }
      Policy only;
      only.only = {std::string(b->name())};
      out.push_back(only);
    }
    return out;
  }

  void check_cases(Dispatcher& d, Worst* worst) {
    const json& cases = expected_["cases"];
    Ids ids, types;
    size_t tokens = 0;
    for (const json& c : cases) {
      ids.push_back(c["token_ids"].get<std::vector<int32_t>>());
      types.push_back(c["token_type_ids"].get<std::vector<int32_t>>());
      tokens += ids.back().size();
    }
    const int h = encoder_->dim();
    std::vector<float> hidden(tokens * h);
    ASSERT_TRUE(encoder_->embed_tokens(ids, d, ctx_, hidden.data()).ok());
    size_t row = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      const json& states = cases[i]["last_hidden_state"];
      ASSERT_EQ(states.size(), ids[i].size()) << "case " << i;
      for (const json& expected_row : states) {
        const auto want = expected_row.get<std::vector<float>>();
        for (int j = 0; j < h; ++j) {
          const double err = std::abs(double(hidden[row * h + j]) - want[j]);
          worst->hidden = std::max(worst->hidden, err);
          ASSERT_LE(err, kMaxHiddenError) << "case " << i << " token " << row << " dim " << j;
        }
        ++row;
      }
    }
    if (cases[0].contains("pooled")) {
      std::vector<float> pooled(cases.size() * h);
      ASSERT_TRUE(encoder_->embed(ids, d, ctx_, pooled.data()).ok());
      for (size_t i = 0; i < cases.size(); ++i) {
        const double c =
            cosine(pooled.data() + i * h, cases[i]["pooled"].get<std::vector<float>>());
        worst->cosine = std::min(worst->cosine, c);
        EXPECT_GE(c, kMinPooledCosine) << "case " << i;
      }
    }
    if (cases[0].contains("scores")) check_scores(cases, ids, types, d, worst);
  }

  void check_scores(const json& rows, const Ids& ids, const Ids& types, Dispatcher& d,
                    Worst* worst) {
    const int labels = encoder_->num_labels();
    std::vector<float> scores(rows.size() * labels);
    const Status st = encoder_->classify(ids, &types, d, ctx_, scores.data());
    ASSERT_TRUE(st.ok()) << st.to_string();
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto want = rows[i]["scores"].get<std::vector<float>>();
      ASSERT_EQ(want.size(), static_cast<size_t>(labels));
      for (int l = 0; l < labels; ++l) {
        const double err = std::abs(double(scores[i * labels + l]) - want[l]);
        worst->score = std::max(worst->score, err);
        EXPECT_LE(err, kMaxScoreError) << "row " << i << " label " << l;
      }
    }
  }

  void check_pairs(Dispatcher& d, Worst* worst) {
    if (!expected_.contains("pairs")) return;
    Ids ids, types;
    for (const json& p : expected_["pairs"]) {
      ids.push_back(p["token_ids"].get<std::vector<int32_t>>());
      types.push_back(p["token_type_ids"].get<std::vector<int32_t>>());
    }
    check_scores(expected_["pairs"], ids, types, d, worst);
  }

  void check_sparse(Dispatcher& d, Worst* worst) {
    if (!expected_.contains("sparse")) return;
    const json& rows = expected_["sparse"];
    Ids ids;
    for (const json& r : rows) ids.push_back(r["token_ids"].get<std::vector<int32_t>>());
    const int v = encoder_->vocab_size();
    std::vector<float> out(rows.size() * v);
    const Status st = encoder_->embed_sparse(ids, d, ctx_, out.data());
    ASSERT_TRUE(st.ok()) << st.to_string();
    for (size_t i = 0; i < rows.size(); ++i) {
      std::vector<float> want(v, 0.0f);
      const auto idx = rows[i]["indices"].get<std::vector<int>>();
      const auto val = rows[i]["values"].get<std::vector<float>>();
      for (size_t k = 0; k < idx.size(); ++k) want[idx[k]] = val[k];
      for (int j = 0; j < v; ++j) {
        const double got = out[i * v + j];
        const double err = std::abs(got - want[j]);
        worst->sparse = std::max(worst->sparse, err);
        ASSERT_LE(err, kMaxScoreError) << "row " << i << " vocabulary entry " << j;
        EXPECT_EQ(got > kSparseThreshold, want[j] > kSparseThreshold) << "row " << i << " " << j;
      }
    }
  }

  Context ctx_;
  Registry registry_;
  std::unique_ptr<Encoder> encoder_;
  json expected_;
};

TEST_P(Architectures, MatchTransformersOnEveryCpuBackend) {
  const std::vector<Policy> policies = cpu_backends();
  ASSERT_FALSE(policies.empty());
  for (const Policy& policy : policies) {
    SCOPED_TRACE(policy.to_string());
    Dispatcher d(registry_, policy);
    Worst worst;
    check_cases(d, &worst);
    check_pairs(d, &worst);
    check_sparse(d, &worst);
    std::cout << "[ arch     ] " << GetParam() << " " << policy.to_string() << std::setprecision(3)
              << ": hidden max abs " << worst.hidden << ", pooled cosine " << std::setprecision(9)
              << worst.cosine << std::setprecision(3) << ", scores " << worst.score << ", sparse "
              << worst.sparse << "\n";
  }
}

TEST_P(Architectures, TokenizerGivesTheIdsTransformersFed) {
  for (const json& c : expected_["cases"]) {
    std::vector<TokenSpan> spans;
    // sentence-transformers prepends a prompt ("Instruct: ...\nQuery:") to the text.
    const std::string text = c.value("prompt", std::string()) + c["text"].get<std::string>();
    const Status st = encoder_->tokenizer().encode(text, encoder_->max_seq_length(), &spans);
    ASSERT_TRUE(st.ok()) << st.to_string();
    std::vector<int32_t> ids;
    for (const TokenSpan& s : spans) ids.push_back(s.id);
    EXPECT_EQ(ids, c["token_ids"].get<std::vector<int32_t>>()) << text;
  }
  if (!expected_.contains("pairs")) return;
  for (const json& p : expected_["pairs"]) {
    std::vector<TokenSpan> spans;
    std::vector<int32_t> types;
    const std::string query = p["query"], text = p["text"];
    const Status st =
        encoder_->tokenizer().encode_pair(query, text, encoder_->max_seq_length(), &spans, &types);
    ASSERT_TRUE(st.ok()) << st.to_string();
    std::vector<int32_t> ids;
    for (const TokenSpan& s : spans) ids.push_back(s.id);
    EXPECT_EQ(ids, p["token_ids"].get<std::vector<int32_t>>()) << query << " | " << text;
    // A tokenizer_config.json without token_type_ids in model_input_names:
    // transformers passes none, the model reads zeros (EncoderModel does).
    if (!encoder_->config().token_type_ids) std::fill(types.begin(), types.end(), 0);
    EXPECT_EQ(types, p["token_type_ids"].get<std::vector<int32_t>>()) << query << " | " << text;
  }
}

// The 8,192-token cases (tiny-modernbert: sliding windows of 17 keys far
// shorter than the sequence, two rotary bases; tiny-nomic-bert: rotary at
// every position up to 8,191). The oracle keeps a sample of rows (the first
// and last 70, every 64th), so errors at window edges and far positions show.
class LongContext : public ::testing::TestWithParam<const char*> {};

TEST_P(LongContext, MatchTransformersAt8192Tokens) {
  Context ctx;
  std::unique_ptr<Encoder> encoder;
  const Status st = Encoder::load(folder(GetParam()), {}, ctx, &encoder);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_EQ(encoder->max_seq_length(), 8192);
  Registry registry;
  register_builtin_backends(registry);
  const json expected = read_expected(GetParam());
  ASSERT_TRUE(expected.contains("long_cases"));
  const int h = encoder->dim();
  for (const char* backend : {"cpu.flash"}) {
    Policy policy;
    policy.only = {backend};
    Dispatcher d(registry, policy);
    for (const json& c : expected["long_cases"]) {
      const Ids ids = {c["token_ids"].get<std::vector<int32_t>>()};
      ASSERT_EQ(ids[0].size(), 8192u);
      std::vector<float> hidden(ids[0].size() * h);
      const Status run = encoder->embed_tokens(ids, d, ctx, hidden.data());
      ASSERT_TRUE(run.ok()) << run.to_string();
      const auto rows = c["rows"].get<std::vector<int64_t>>();
      double worst = 0;
      for (size_t r = 0; r < rows.size(); ++r) {
        const auto want = c["last_hidden_state"][r].get<std::vector<float>>();
        for (int j = 0; j < h; ++j) {
          const double err = std::abs(double(hidden[rows[r] * h + j]) - want[j]);
          worst = std::max(worst, err);
          ASSERT_LE(err, kMaxHiddenError) << backend << " token " << rows[r] << " dim " << j;
        }
      }
      std::vector<float> pooled(h);
      ASSERT_TRUE(encoder->embed(ids, d, ctx, pooled.data()).ok());
      const double cos = cosine(pooled.data(), c["pooled"].get<std::vector<float>>());
      EXPECT_GE(cos, kMinPooledCosine) << backend;
      std::cout << "[ long     ] " << GetParam() << " only:" << backend
                << " 8192 tokens: hidden max abs " << std::setprecision(3) << worst
                << ", pooled cosine " << std::setprecision(9) << cos << "\n";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TinyModels, LongContext, ::testing::ValuesIn(kTinyLongContextModels),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// Issue 48: sentence-transformers' Dense modules after pooling (LaBSE,
// distiluse, EmbeddingGemma), as sentence-transformers 6.3 saves them
// (tools/make_module_models.py): three Dense layers (Tanh with bias, GELU with
// the input added back, Identity without bias and with a projected
// residual), then Normalize; encode()'s rows are the oracle.
TEST(Modules, DenseLayersMatchSentenceTransformers) {
  Context ctx;
  std::unique_ptr<Encoder> encoder;
  const Status st = Encoder::load(folder("tiny-bert-dense"), {}, ctx, &encoder);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(encoder->dim(), 16);
  EXPECT_EQ(encoder->hidden_size(), 32);
  const json expected = read_expected("tiny-bert-dense");
  Registry registry;
  register_builtin_backends(registry);
  Dispatcher d(registry, Policy{});
  double worst = 0;
  for (const json& c : expected["cases"]) {
    const Ids ids = {c["token_ids"].get<std::vector<int32_t>>()};
    const auto want = c["embedding"].get<std::vector<float>>();
    ASSERT_EQ(want.size(), 16u);
    std::vector<float> got(16);
    ASSERT_TRUE(encoder->embed(ids, d, ctx, got.data()).ok());
    for (size_t i = 0; i < want.size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]));
    }
    EXPECT_GE(cosine(got.data(), want), kMinPooledCosine) << c["text"];
    // Token states keep the encoder's width.
    std::vector<float> states(ids[0].size() * 32);
    ASSERT_TRUE(encoder->embed_tokens(ids, d, ctx, states.data()).ok());
  }
  EXPECT_LE(worst, 1e-5);
  std::cout << "[ dense    ] tiny-bert-dense: " << expected["cases"].size()
            << " texts, max abs error " << std::setprecision(3) << worst << "\n";
}

// sentence-transformers' other Pooling modes on tiny-bert, in its 6.x config
// shape ({"pooling_mode"}) and its 5.x flags: mean_sqrt_len_tokens (the sum
// over sqrt(n)) and weightedmean (token i weighs i + 1), against encode()
// (data/golden/pooling_modes.json, tools/make_module_models.py).
TEST(Modules, PoolingModesMatchSentenceTransformers) {
  const json golden = json::parse(
      testing::read_text(std::string(TESSERA_SOURCE_DIR) + "/data/golden/pooling_modes.json"));
  Registry registry;
  register_builtin_backends(registry);
  Dispatcher d(registry, Policy{});
  for (const auto& [mode, cases] : golden["modes"].items()) {
    for (const bool six : {true, false}) {
      testing::TempDir dir;
      std::filesystem::copy(folder("tiny-bert"), dir.path(),
                            std::filesystem::copy_options::recursive |
                                std::filesystem::copy_options::overwrite_existing);
      json pooling = {{"word_embedding_dimension", 32}, {"include_prompt", true}};
      if (six) {
        pooling = {{"embedding_dimension", 32}, {"pooling_mode", mode}};
      } else {
        for (const char* flag : {"pooling_mode_cls_token", "pooling_mode_mean_tokens",
                                 "pooling_mode_max_tokens", "pooling_mode_lasttoken"}) {
          pooling[flag] = false;
        }
        pooling["pooling_mode_mean_sqrt_len_tokens"] = mode == "mean_sqrt_len_tokens";
        pooling["pooling_mode_weightedmean_tokens"] = mode == "weightedmean";
      }
      testing::write_file(dir.file("1_Pooling/config.json"), pooling.dump());
      Context ctx;
      std::unique_ptr<Encoder> encoder;
      const Status st = Encoder::load(dir.path().string(), {}, ctx, &encoder);
      ASSERT_TRUE(st.ok()) << mode << ": " << st.to_string();
      double worst = 0;
      for (const json& c : cases) {
        const Ids ids = {c["token_ids"].get<std::vector<int32_t>>()};
        const auto want = c["embedding"].get<std::vector<float>>();
        std::vector<float> got(want.size());
        ASSERT_TRUE(encoder->embed(ids, d, ctx, got.data()).ok());
        for (size_t i = 0; i < want.size(); ++i) {
          worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]) /
                                      std::max(1.0, std::fabs(static_cast<double>(want[i]))));
        }
      }
      EXPECT_LE(worst, 1e-5) << mode << (six ? " (6.x config)" : " (5.x flags)");
    }
  }
}

// What a Dense module cannot be: named, never run wrongly.
TEST(Modules, DenseModulesWeCannotRunAreRefusedNamingTheField) {
  const auto edit = [](const std::function<void(const std::string&)>& change,
                       testing::TempDir* dir) {
    std::filesystem::copy(folder("tiny-bert-dense"), dir->path(),
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::overwrite_existing);
    change(dir->path().string());
    Context ctx;
    std::unique_ptr<Encoder> encoder;
    return Encoder::load(dir->path().string(), {}, ctx, &encoder);
  };
  const auto set = [](const std::string& file, const char* key, const json& value) {
    json j = json::parse(testing::read_text(file));
    j[key] = value;
    testing::write_file(file, j.dump());
  };
  testing::TempDir a, b, c, e;
  testing::expect_status(edit(
                             [&](const std::string& d) {
                               set(d + "/2_Dense/config.json", "activation_function",
                                   "torch.nn.modules.activation.Mish");
                             },
                             &a),
                         StatusCode::kUnsupported,
                         {"2_Dense/config.json", "activation_function", "Mish", "Tanh"});
  testing::expect_status(
      edit([&](const std::string& d) { set(d + "/3_Dense/config.json", "in_features", 20); }, &b),
      StatusCode::kInvalidArgument, {"3_Dense/config.json", "in_features = 20", "gives 24"});
  testing::expect_status(edit(
                             [&](const std::string& d) {
                               set(d + "/2_Dense/config.json", "module_input_name",
                                   "token_embeddings");
                             },
                             &c),
                         StatusCode::kUnsupported, {"module_input_name", "token_embeddings"});
  testing::expect_status(edit(
                             [&](const std::string& d) {
                               std::filesystem::rename(d + "/2_Dense/model.safetensors",
                                                       d + "/2_Dense/pytorch_model.bin");
                             },
                             &e),
                         StatusCode::kUnsupported,
                         {"2_Dense/pytorch_model.bin", "does not read yet"});
}

// A copy of a tiny model folder with config.json changed by `edit`.
Status load_edited(const std::string& name, const std::function<void(json*)>& edit,
                   testing::TempDir* dir) {
  std::filesystem::copy(
      folder(name), dir->path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  json config = json::parse(testing::read_text(dir->file("config.json")));
  edit(&config);
  testing::write_file(dir->file("config.json"), config.dump());
  Context ctx;
  std::unique_ptr<Encoder> encoder;
  return Encoder::load(dir->path().string(), {}, ctx, &encoder);
}

TEST(ArchitectureLoad, UnsupportedModelTypeListsEveryArchitecture) {
  testing::TempDir dir;
  testing::expect_status(
      load_edited(
          "tiny-bert", [](json* c) { (*c)["model_type"] = "llama"; }, &dir),
      StatusCode::kUnsupported,
      {"config.json", "\"llama\"", "bert", "mpnet", "roberta", "xlm-roberta", "camembert"});
}

TEST(ArchitectureLoad, ClassifierRowsMustMatchTheLabels) {
  testing::TempDir dir;
  testing::expect_status(load_edited(
                             "tiny-bert-classify",
                             [](json* c) {
                               (*c)["id2label"] = {{"0", "no"}, {"1", "yes"}};
                             },
                             &dir),
                         StatusCode::kInvalidArgument, {"classifier.weight", "[3, 32]", "[2, 32]"});
}

TEST(ArchitectureLoad, BadLabelsAndBucketsNameTheField) {
  testing::TempDir a, b, c;
  testing::expect_status(load_edited(
                             "tiny-bert-classify",
                             [](json* c) {
                               (*c)["id2label"] = {{"0", "no"}, {"7", "yes"}};
                             },
                             &a),
                         StatusCode::kInvalidArgument, {"id2label", "\"7\""});
  testing::expect_status(
      load_edited(
          "tiny-mpnet", [](json* c) { (*c)["relative_attention_num_buckets"] = 16; }, &b),
      StatusCode::kInvalidArgument, {"relative_attention_num_buckets = 16", "32"});
  testing::expect_status(
      load_edited(
          "tiny-roberta", [](json* c) { (*c)["max_position_embeddings"] = 2; }, &c),
      StatusCode::kInvalidArgument, {"max_position_embeddings = 2", "padding_idx + 1"});
}

TEST(ArchitectureLoad, ATokenizerWithoutSpecialsFramesNothing) {
  // HF adds no specials without a post-processor; windows are then the text
  // alone (the pipeline frames through Tokenizer::frame()).
  testing::TempDir dir;
  std::filesystem::copy(
      folder("tiny-bert"), dir.path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  json tok = json::parse(testing::read_text(dir.file("tokenizer.json")));
  tok["post_processor"] = nullptr;
  testing::write_file(dir.file("tokenizer.json"), tok.dump());
  Context ctx;
  std::unique_ptr<Encoder> encoder;
  const Status st = Encoder::load(dir.path().string(), {}, ctx, &encoder);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_TRUE(encoder->tokenizer().frame().prefix.empty());
  EXPECT_TRUE(encoder->tokenizer().frame().suffix.empty());
  std::vector<TokenSpan> spans;
  ASSERT_TRUE(encoder->tokenizer().encode("hello world", 16, &spans).ok());
  std::vector<TokenSpan> bare;
  ASSERT_TRUE(encoder->tokenizer().tokenize("hello world", &bare).ok());
  ASSERT_EQ(spans.size(), bare.size());
  for (size_t i = 0; i < spans.size(); ++i) EXPECT_EQ(spans[i].id, bare[i].id);
}

TEST(ArchitectureLoad, AVocabularyPastTheEmbeddingsIsRefused) {
  // An added token outside the 800-entry vocabulary gets id 800: one row
  // past word_embeddings, which the encoder must never read.
  testing::TempDir dir;
  std::filesystem::copy(
      folder("tiny-bert"), dir.path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  json tok = json::parse(testing::read_text(dir.file("tokenizer.json")));
  tok["added_tokens"].push_back({{"id", 800},
                                 {"content", "<extra>"},
                                 {"single_word", false},
                                 {"lstrip", false},
                                 {"rstrip", false},
                                 {"normalized", false},
                                 {"special", true}});
  testing::write_file(dir.file("tokenizer.json"), tok.dump());
  Context ctx;
  std::unique_ptr<Encoder> encoder;
  testing::expect_status(Encoder::load(dir.path().string(), {}, ctx, &encoder),
                         StatusCode::kInvalidArgument,
                         {"tokenizer.json", "\"<extra>\" has id 800", "vocab_size = 800"});
}

TEST(ArchitectureLoad, RotaryAndWindowConfigsWeCannotRunAreRefusedNamingTheField) {
  testing::TempDir a, b, c, d, e, f;
  testing::expect_status(load_edited(
                             "tiny-qwen3",
                             [](json* c) {
                               (*c)["rope_parameters"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
                             },
                             &a),
                         StatusCode::kUnsupported,
                         {"rope_parameters", "rope_type \"yarn\"", "\"linear\""});
  testing::expect_status(
      load_edited(
          "tiny-modernbert-layertypes",
          [](json* c) { (*c)["rope_parameters"]["sliding_attention"]["rope_type"] = "dynamic"; },
          &b),
      StatusCode::kUnsupported, {"rope_parameters.sliding_attention", "\"dynamic\""});
  testing::expect_status(load_edited(
                             "tiny-modernbert-layertypes",
                             [](json* c) { (*c)["layer_types"][1] = "chunked_attention"; }, &c),
                         StatusCode::kUnsupported,
                         {"layer_types[1]", "chunked_attention", "sliding_attention"});
  testing::expect_status(
      load_edited(
          "tiny-nomic-bert-hub", [](json* c) { (*c)["rotary_scaling_factor"] = 2.0; }, &d),
      StatusCode::kUnsupported, {"rotary_scaling_factor = 2", "null"});
  testing::expect_status(
      load_edited(
          "tiny-nomic-bert-hub", [](json* c) { (*c)["rotary_emb_interleaved"] = true; }, &e),
      StatusCode::kUnsupported, {"rotary_emb_interleaved"});
  testing::expect_status(load_edited(
                             "tiny-qwen3", [](json* c) { (*c)["num_key_value_heads"] = 3; }, &f),
                         StatusCode::kInvalidArgument,
                         {"num_attention_heads = 4", "num_key_value_heads = 3"});
}

// Hostile input III, class 10: Qwen3's layer_types was read by nobody, so a
// list of the wrong length or naming a layer kind tessera does not run was
// accepted silently; transformers' layer_type_validation refuses both.
TEST(ArchitectureLoad, Qwen3LayerTypesAreCheckedAsTransformersDoes) {
  const int layers = 3;  // tiny-qwen3's num_hidden_layers
  testing::TempDir ok, short_list, sliding, unknown, not_array, modernbert;
  EXPECT_TRUE(load_edited(
                  "tiny-qwen3",
                  [&](json* c) {
                    (*c)["layer_types"] = std::vector<std::string>(layers, "full_attention");
                  },
                  &ok)
                  .ok());
  testing::expect_status(load_edited(
                             "tiny-qwen3",
                             [](json* c) {
                               (*c)["layer_types"] = {"full_attention", "full_attention"};
                             },
                             &short_list),
                         StatusCode::kInvalidArgument,
                         {"layer_types", "2 entries", "num_hidden_layers = 3"});
  testing::expect_status(
      load_edited(
          "tiny-qwen3",
          [&](json* c) {
            (*c)["layer_types"] = std::vector<std::string>(layers, "full_attention");
            (*c)["layer_types"][1] = "sliding_attention";
          },
          &sliding),
      StatusCode::kUnsupported, {"layer_types[1]", "\"sliding_attention\"", "\"full_attention\""});
  testing::expect_status(
      load_edited(
          "tiny-qwen3",
          [&](json* c) {
            (*c)["layer_types"] = {"full_attention", "attention", "full_attention"};
          },
          &unknown),
      StatusCode::kUnsupported, {"layer_types[1]", "\"attention\""});
  testing::expect_status(
      load_edited(
          "tiny-qwen3", [](json* c) { (*c)["layer_types"] = "full_attention"; }, &not_array),
      StatusCode::kInvalidArgument, {"layer_types", "must be an array"});
  // ModernBERT's list is held to the same length.
  testing::expect_status(
      load_edited(
          "tiny-modernbert-layertypes", [](json* c) { (*c)["layer_types"].erase(0); }, &modernbert),
      StatusCode::kInvalidArgument, {"layer_types", "num_hidden_layers = 4"});
}

TEST(ArchitectureLoad, HeadsOnTheNewArchitecturesAreRefused) {
  testing::TempDir dir;
  testing::expect_status(
      load_edited(
          "tiny-qwen3", [](json* c) { (*c)["architectures"] = {"Qwen3ForSequenceClassification"}; },
          &dir),
      StatusCode::kUnsupported, {"sequence classification", "qwen3", "embedding model only"});
}

TEST(ArchitectureLoad, AnActivationTheFfnCannotRunIsNamed) {
  testing::TempDir a, b;
  testing::expect_status(
      load_edited(
          "tiny-modernbert", [](json* c) { (*c)["hidden_activation"] = "relu2"; }, &a),
      StatusCode::kUnsupported, {"hidden_activation \"relu2\"", "silu"});
  testing::expect_status(
      load_edited(
          "tiny-nomic-bert-hub", [](json* c) { (*c)["activation_function"] = "gelu"; }, &b),
      StatusCode::kUnsupported, {"activation_function \"gelu\"", "swiglu"});
}

// Older config shapes of the same checkpoint (tiny-qwen3: transformers 4's
// rope_theta + rope_scaling instead of rope_parameters) give the same outputs.
TEST(ArchitectureLoad, ConfigVariantsGiveTheSameOutputs) {
  const json expected = read_expected("tiny-qwen3");
  ASSERT_TRUE(expected.contains("config_variants"));
  Registry registry;
  register_builtin_backends(registry);
  Dispatcher d(registry, Policy{});
  for (const json& variant : expected["config_variants"]) {
    SCOPED_TRACE(variant["name"].get<std::string>());
    testing::TempDir dir;
    std::filesystem::copy(folder("tiny-qwen3"), dir.path(),
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::overwrite_existing);
    json config = json::parse(testing::read_text(dir.file("config.json")));
    for (const json& key : variant["drop"]) config.erase(key.get<std::string>());
    for (const auto& [key, value] : variant["set"].items()) config[key] = value;
    testing::write_file(dir.file("config.json"), config.dump());
    Context ctx;
    std::unique_ptr<Encoder> encoder;
    const Status st = Encoder::load(dir.path().string(), {}, ctx, &encoder);
    ASSERT_TRUE(st.ok()) << st.to_string();
    const json& c = expected["cases"].back();  // the longest positions matter most for rope
    const Ids ids = {c["token_ids"].get<std::vector<int32_t>>()};
    const int h = encoder->dim();
    std::vector<float> hidden(ids[0].size() * h);
    ASSERT_TRUE(encoder->embed_tokens(ids, d, ctx, hidden.data()).ok());
    for (size_t t = 0; t < ids[0].size(); ++t) {
      const auto want = c["last_hidden_state"][t].get<std::vector<float>>();
      for (int j = 0; j < h; ++j) {
        ASSERT_LE(std::abs(double(hidden[t * h + j]) - want[j]), kMaxHiddenError)
            << "token " << t << " dim " << j;
      }
    }
  }
}

TEST(ArchitectureLoad, MissingHeadTensorIsNamed) {
  // A checkpoint of the base model under a classifier's config.
  testing::TempDir dir;
  testing::expect_status(
      load_edited(
          "tiny-bert", [](json* c) { (*c)["architectures"] = {"BertForSequenceClassification"}; },
          &dir),
      StatusCode::kNotFound, {"missing tensor", "classifier.weight"});
}

// The folders every architecture folder lists (its tiny_models.json).
INSTANTIATE_TEST_SUITE_P(TinyModels, Architectures, ::testing::ValuesIn(kTinyModels),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace tessera::model
