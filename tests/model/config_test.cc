#include "model/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model_test_util.h"

namespace tessera::model {
namespace {

using nlohmann::json;
using testing::TempDir;
using testing::TinyBert;

void expect_error(const Status& st, StatusCode code, std::initializer_list<std::string> parts) {
  EXPECT_EQ(st.code(), code) << st.to_string();
  for (const std::string& p : parts) {
    EXPECT_NE(st.message().find(p), std::string::npos)
        << "message lacks '" << p << "': " << st.message();
  }
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

TEST(Config, ReadsTheDefaultModel) {
  const std::string dir = std::string(TESSERA_SOURCE_DIR) + "/models/all-MiniLM-L6-v2";
  ASSERT_TRUE(std::filesystem::exists(dir + "/config.json"))
      << dir << " is missing: run scripts/install-deps.sh";
  ModelConfig c;
  ASSERT_TRUE(load_model_config(dir, &c).ok());
  EXPECT_EQ(c.network.hidden_size, 384);
  EXPECT_EQ(c.network.num_attention_heads, 12);
  EXPECT_EQ(c.network.head_dim(), 32);
  EXPECT_EQ(c.network.num_hidden_layers, 6);
  EXPECT_EQ(c.network.intermediate_size, 1536);
  EXPECT_EQ(c.network.vocab_size, 30522);
  EXPECT_EQ(c.network.max_position_embeddings, 512);
  EXPECT_EQ(c.network.type_vocab_size, 2);
  EXPECT_FLOAT_EQ(c.network.layer_norm_eps, 1e-12f);
  EXPECT_EQ(c.pooling, Pooling::kMean);
  EXPECT_TRUE(c.normalize);
  EXPECT_EQ(c.max_seq_length, 256);
  EXPECT_EQ(c.weights_path, dir + "/model.safetensors");
}

TEST(Config, PoolingModesAndNoNormalize) {
  for (const char* mode : {"cls", "mean", "max"}) {
    TempDir dir;
    TinyBert tiny;
    tiny.pooling = mode;
    tiny.normalize = false;
    tiny.write(dir.path().string());
    ModelConfig c;
    ASSERT_TRUE(load_model_config(dir.path().string(), &c).ok()) << mode;
    EXPECT_STREQ(pooling_name(c.pooling), mode);
    EXPECT_FALSE(c.normalize);
    EXPECT_EQ(c.max_seq_length, tiny.max_seq_length);
  }
}

// A folder as sentence-transformers 6 saves it: module types by their 6.x
// paths, Pooling's {"pooling_mode", "embedding_dimension"}, and the length in
// tokenizer_config.json's model_max_length (sentence_bert_config.json no
// longer has max_seq_length).
TEST(Config, SentenceTransformers6Folder) {
  for (const char* mode : {"cls", "mean", "max"}) {
    TempDir dir;
    TinyBert tiny;
    tiny.write(dir.path().string());
    testing::write_file(
        dir.file("modules.json"),
        json::array(
            {{{"idx", 0},
              {"name", "0"},
              {"path", ""},
              {"type", "sentence_transformers.base.modules.transformer.Transformer"}},
             {{"idx", 1},
              {"name", "1"},
              {"path", "1_Pooling"},
              {"type", "sentence_transformers.sentence_transformer.modules.pooling.Pooling"}},
             {{"idx", 2},
              {"name", "2"},
              {"path", "2_Normalize"},
              {"type", "sentence_transformers.base.modules.normalize.Normalize"}}})
            .dump());
    testing::write_file(dir.file("1_Pooling/config.json"),
                        json({{"embedding_dimension", tiny.hidden},
                              {"pooling_mode", mode},
                              {"include_prompt", true}})
                            .dump());
    testing::write_file(dir.file("sentence_bert_config.json"),
                        json({{"transformer_task", "feature-extraction"}}).dump());
    testing::write_file(dir.file("tokenizer_config.json"), json({{"model_max_length", 10}}).dump());
    ModelConfig c;
    const Status s = load_model_config(dir.path().string(), &c);
    ASSERT_TRUE(s.ok()) << mode << ": " << s.to_string();
    EXPECT_STREQ(pooling_name(c.pooling), mode);
    EXPECT_TRUE(c.normalize);
    EXPECT_EQ(c.max_seq_length, 10);
    // HF's "no limit" sentinel leaves the positions as the limit.
    testing::write_file(dir.file("tokenizer_config.json"),
                        json({{"model_max_length", 1e30}}).dump());
    ASSERT_TRUE(load_model_config(dir.path().string(), &c).ok());
    EXPECT_EQ(c.max_seq_length, tiny.positions);
    // A list of one mode is that mode; two (concatenated) are refused, named.
    testing::write_file(dir.file("1_Pooling/config.json"),
                        json({{"embedding_dimension", tiny.hidden},
                              {"pooling_mode", json::array({mode, "weightedmean"})}})
                            .dump());
    expect_error(load_model_config(dir.path().string(), &c), StatusCode::kUnsupported,
                 {"1_Pooling/config.json", "pooling_mode", "weightedmean"});
  }
}

// An unknown module names its whole type (never cut) and what is supported.
TEST(Config, UnknownModuleNamesItsWholeType) {
  TempDir dir;
  TinyBert().write(dir.path().string());
  json modules = read_json(dir.file("modules.json"));
  const std::string type = "sentence_transformers.base.modules.router.Router";
  modules.push_back({{"idx", 2}, {"name", "2"}, {"path", "2_Router"}, {"type", type}});
  testing::write_file(dir.file("modules.json"), modules.dump());
  ModelConfig c;
  expect_error(load_model_config(dir.path().string(), &c), StatusCode::kUnsupported,
               {"modules.json", "'" + type + "'", "supported: Transformer, Pooling"});
}

TEST(Config, PlainHfDirectoryDefaultsToMeanPooling) {
  TempDir dir;
  TinyBert tiny;
  tiny.write(dir.path().string());
  std::filesystem::remove(dir.file("modules.json"));
  std::filesystem::remove(dir.file("sentence_bert_config.json"));
  ModelConfig c;
  ASSERT_TRUE(load_model_config(dir.path().string(), &c).ok());
  EXPECT_EQ(c.pooling, Pooling::kMean);
  EXPECT_FALSE(c.normalize);
  EXPECT_EQ(c.max_seq_length, tiny.positions);
}

// Rewrites one field of a JSON file in a fresh tiny model and loads it.
Status load_with(const std::string& file, const std::string& key, const json& value) {
  TempDir dir;
  TinyBert().write(dir.path().string());
  json j = read_json(dir.file(file));
  if (value.is_null()) {
    j.erase(key);
  } else {
    j[key] = value;
  }
  testing::write_file(dir.file(file), j.dump());
  ModelConfig c;
  return load_model_config(dir.path().string(), &c);
}

TEST(Config, UnsupportedArchitectureListsWhatIsSupported) {
  expect_error(load_with("config.json", "model_type", "llama"), StatusCode::kUnsupported,
               {"config.json", "\"llama\"", "supported", "bert"});
  expect_error(load_with("config.json", "hidden_act", "gelu_new"), StatusCode::kUnsupported,
               {"hidden_act", "gelu_new", "supported"});
  expect_error(load_with("config.json", "position_embedding_type", "relative_key"),
               StatusCode::kUnsupported, {"relative_key", "absolute"});
}

TEST(Config, BadFields) {
  expect_error(load_with("config.json", "hidden_size", nullptr), StatusCode::kInvalidArgument,
               {"config.json", "missing field 'hidden_size'"});
  expect_error(load_with("config.json", "num_hidden_layers", -3), StatusCode::kInvalidArgument,
               {"num_hidden_layers", "-3", "positive integer"});
  expect_error(load_with("config.json", "num_attention_heads", 3), StatusCode::kInvalidArgument,
               {"hidden_size = 8", "num_attention_heads = 3"});
  expect_error(load_with("config.json", "layer_norm_eps", "small"), StatusCode::kInvalidArgument,
               {"layer_norm_eps"});
  expect_error(load_with("config.json", "model_type", 7), StatusCode::kInvalidArgument,
               {"model_type", "string"});
  expect_error(
      load_with("sentence_bert_config.json", "max_seq_length", 100), StatusCode::kInvalidArgument,
      {"sentence_bert_config.json", "max_seq_length = 100", "max_position_embeddings = 16"});
  expect_error(load_with("1_Pooling/config.json", "pooling_mode_max_tokens", true),
               StatusCode::kUnsupported,
               {"1_Pooling/config.json", "pooling_mode_mean_tokens, pooling_mode_max_tokens"});
  expect_error(load_with("1_Pooling/config.json", "word_embedding_dimension", 9),
               StatusCode::kInvalidArgument, {"word_embedding_dimension = 9", "hidden_size = 8"});
}

TEST(Config, MissingOrCorruptFiles) {
  ModelConfig c;
  expect_error(load_model_config("/nonexistent/model", &c), StatusCode::kNotFound,
               {"/nonexistent/model"});
  {
    TempDir dir;
    TinyBert().write(dir.path().string());
    std::filesystem::remove(dir.file("config.json"));
    expect_error(load_model_config(dir.path().string(), &c), StatusCode::kNotFound,
                 {"config.json", "missing"});
  }
  {
    TempDir dir;
    TinyBert().write(dir.path().string());
    testing::write_file(dir.file("config.json"), "{\"model_type\": \"bert\",");
    expect_error(load_model_config(dir.path().string(), &c), StatusCode::kInvalidArgument,
                 {"config.json", "not valid JSON"});
  }
  {
    TempDir dir;
    TinyBert().write(dir.path().string());
    std::filesystem::remove(dir.file("model.safetensors"));
    expect_error(load_model_config(dir.path().string(), &c), StatusCode::kNotFound,
                 {"model.safetensors"});
  }
  {
    TempDir dir;
    TinyBert().write(dir.path().string());
    json modules = read_json(dir.file("modules.json"));
    modules.push_back({{"idx", 3},
                       {"name", "3"},
                       {"path", "3_Dense"},
                       {"type", "sentence_transformers.models.Dense"}});
    testing::write_file(dir.file("modules.json"), modules.dump());
    expect_error(load_model_config(dir.path().string(), &c), StatusCode::kUnsupported,
                 {"modules.json", "Dense", "supported"});
  }
}

}  // namespace
}  // namespace tessera::model

namespace tessera::model {
namespace {

TEST(ConfigPrompts, ReadFromConfigSentenceTransformers) {
  const std::string dir = std::string(TESSERA_SOURCE_DIR) + "/data/models/tiny-qwen3";
  ModelConfig c;
  ASSERT_TRUE(load_model_config(dir, &c).ok());
  ASSERT_EQ(c.prompts.by_name.size(), 2u);
  EXPECT_EQ(c.prompts.by_name.at("document"), "");
  EXPECT_EQ(c.prompts.by_name.at("query").rfind("Instruct: ", 0), 0u);
  EXPECT_EQ(c.prompts.default_name, "");  // default_prompt_name: null
  EXPECT_TRUE(c.prompts.pooled);
}

TEST(ConfigPrompts, BadPromptsAreRefusedNamingTheField) {
  const auto with_st_config = [](const json& st) {
    TempDir dir;
    TinyBert().write(dir.path().string());
    testing::write_file(dir.file("config_sentence_transformers.json"), st.dump());
    ModelConfig c;
    Status s = load_model_config(dir.path().string(), &c);
    return std::make_pair(s, c.prompts);
  };
  auto [ok, prompts] = with_st_config(
      {{"prompts", {{"query", "q: "}, {"passage", "p: "}}}, {"default_prompt_name", "passage"}});
  ASSERT_TRUE(ok.ok()) << ok.to_string();
  EXPECT_EQ(prompts.default_name, "passage");
  EXPECT_EQ(prompts.by_name.size(), 3u);  // with the implicit, empty "document"
  EXPECT_EQ(prompts.by_name.at("document"), "");
  expect_error(with_st_config({{"prompts", {{"query", 3}}}}).first, StatusCode::kInvalidArgument,
               {"config_sentence_transformers.json", "prompts.query must be a string"});
  expect_error(
      with_st_config({{"prompts", {{"query", "q: "}}}, {"default_prompt_name", "doc"}}).first,
      StatusCode::kInvalidArgument, {"default_prompt_name = \"doc\"", "{document, query}"});
  expect_error(with_st_config({{"prompts", "query"}}).first, StatusCode::kInvalidArgument,
               {"prompts must be an object"});
}

}  // namespace
}  // namespace tessera::model
