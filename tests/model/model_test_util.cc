#include "model_test_util.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>

#include "tessera/dtype.h"

namespace tessera::model::testing {

namespace fs = std::filesystem;
using nlohmann::json;

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "tessera-model-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string source_path(const std::string& relative) {
  return std::string(TESSERA_SOURCE_DIR) + "/" + relative;
}

std::string model_dir() { return source_path("models/all-MiniLM-L6-v2"); }

void write_file(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string safetensors_bytes(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string make_safetensors(const std::vector<FakeTensor>& tensors) {
  json header = json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::string data;
  for (const FakeTensor& t : tensors) {
    const size_t begin = data.size();
    for (float v : t.values) {
      if (t.dtype == "F32") {
        data.append(reinterpret_cast<const char*>(&v), sizeof v);
      } else {
        const uint16_t h = t.dtype == "F16" ? f32_to_f16(v) : f32_to_bf16(v);
        data.append(reinterpret_cast<const char*>(&h), sizeof h);
      }
    }
    header[t.name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  return safetensors_bytes(header.dump(), data);
}

std::vector<FakeTensor> TinyBert::tensors() const {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  auto random = [&](const std::string& name, const std::vector<int64_t>& shape, float mean = 0.0f) {
    FakeTensor t{name, shape, {}, dtype};
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    for (int64_t i = 0; i < n; ++i) t.values.push_back(mean + normal(rng));
    return t;
  };
  const int64_t h = hidden, in = intermediate;
  std::vector<FakeTensor> out = {
      random("embeddings.word_embeddings.weight", {vocab, h}),
      random("embeddings.position_embeddings.weight", {positions, h}),
      random("embeddings.token_type_embeddings.weight", {2, h}),
      random("embeddings.LayerNorm.weight", {h}, 1.0f),
      random("embeddings.LayerNorm.bias", {h}),
  };
  for (int l = 0; l < layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    for (const char* m : {"query", "key", "value"}) {
      out.push_back(random(p + "attention.self." + m + ".weight", {h, h}));
      out.push_back(random(p + "attention.self." + m + ".bias", {h}));
    }
    out.push_back(random(p + "attention.output.dense.weight", {h, h}));
    out.push_back(random(p + "attention.output.dense.bias", {h}));
    out.push_back(random(p + "attention.output.LayerNorm.weight", {h}, 1.0f));
    out.push_back(random(p + "attention.output.LayerNorm.bias", {h}));
    out.push_back(random(p + "intermediate.dense.weight", {in, h}));
    out.push_back(random(p + "intermediate.dense.bias", {in}));
    out.push_back(random(p + "output.dense.weight", {h, in}));
    out.push_back(random(p + "output.dense.bias", {h}));
    out.push_back(random(p + "output.LayerNorm.weight", {h}, 1.0f));
    out.push_back(random(p + "output.LayerNorm.bias", {h}));
  }
  out.push_back(random("pooler.dense.weight", {h, h}));  // unused by sentence-transformers
  out.push_back(random("pooler.dense.bias", {h}));
  return out;
}

void TinyBert::write(const std::string& dir, const std::vector<FakeTensor>& tensors) const {
  const fs::path d(dir);
  json config = {{"architectures", {"BertModel"}},
                 {"model_type", "bert"},
                 {"hidden_act", "gelu"},
                 {"hidden_size", hidden},
                 {"num_attention_heads", heads},
                 {"num_hidden_layers", layers},
                 {"intermediate_size", intermediate},
                 {"max_position_embeddings", positions},
                 {"type_vocab_size", 2},
                 {"vocab_size", vocab},
                 {"layer_norm_eps", 1e-12},
                 {"position_embedding_type", "absolute"}};
  write_file((d / "config.json").string(), config.dump(2));
  json modules = json::array();
  modules.push_back({{"idx", 0},
                     {"name", "0"},
                     {"path", ""},
                     {"type", "sentence_transformers.models.Transformer"}});
  modules.push_back({{"idx", 1},
                     {"name", "1"},
                     {"path", "1_Pooling"},
                     {"type", "sentence_transformers.models.Pooling"}});
  if (normalize) {
    modules.push_back({{"idx", 2},
                       {"name", "2"},
                       {"path", "2_Normalize"},
                       {"type", "sentence_transformers.models.Normalize"}});
  }
  write_file((d / "modules.json").string(), modules.dump(2));
  json pooling_config = {{"word_embedding_dimension", hidden},
                         {"pooling_mode_cls_token", pooling == "cls"},
                         {"pooling_mode_mean_tokens", pooling == "mean"},
                         {"pooling_mode_max_tokens", pooling == "max"},
                         {"pooling_mode_mean_sqrt_len_tokens", false}};
  write_file((d / "1_Pooling" / "config.json").string(), pooling_config.dump(2));
  write_file((d / "sentence_bert_config.json").string(),
             json({{"max_seq_length", max_seq_length}, {"do_lower_case", false}}).dump());
  // vocab.txt: the specials at BERT's usual places, then filler words.
  std::string vocab_text;
  for (int i = 0; i < vocab; ++i) {
    const char* special = i == 0   ? "[PAD]"
                          : i == 1 ? "[UNK]"
                          : i == 2 ? "[CLS]"
                          : i == 3 ? "[SEP]"
                          : i == 4 ? "[MASK]"
                                   : nullptr;
    vocab_text += special ? std::string(special) : "w" + std::to_string(i);
    vocab_text += "\n";
  }
  write_file((d / "vocab.txt").string(), vocab_text);
  std::vector<FakeTensor> named = tensors;
  for (FakeTensor& t : named) t.name = prefix + t.name;
  write_file((d / "model.safetensors").string(), make_safetensors(named));
}

double cosine(const float* a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

void expect_status(const Status& st, StatusCode code, const std::vector<std::string>& parts) {
  EXPECT_EQ(st.code(), code) << st.to_string();
  for (const std::string& part : parts) {
    EXPECT_NE(st.message().find(part), std::string::npos)
        << "\"" << part << "\" not in: " << st.message();
  }
}

}  // namespace tessera::model::testing
