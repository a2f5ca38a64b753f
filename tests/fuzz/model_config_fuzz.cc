// Fuzz target: the configuration files of a sentence-transformers model
// directory. The first byte picks which file the rest of the input replaces
// (config.json, modules.json, 1_Pooling/config.json or
// sentence_bert_config.json); the other three keep valid contents, so every
// file is reached with its neighbours consistent.
#include <cstdint>
#include <string>

#include "model/config.h"
#include "scratch_dir.h"

namespace {

struct File {
  const char* name;
  const char* valid;
};
constexpr File kFiles[] = {
    {"config.json",
     R"({"model_type": "bert", "vocab_size": 30522, "hidden_size": 384,
         "num_attention_heads": 12, "num_hidden_layers": 6, "intermediate_size": 1536,
         "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
         "hidden_act": "gelu", "position_embedding_type": "absolute"})"},
    {"modules.json",
     R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
         {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
         {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}])"},
    {"1_Pooling/config.json",
     R"({"word_embedding_dimension": 384, "pooling_mode_cls_token": false,
         "pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": false})"},
    {"sentence_bert_config.json", R"({"max_seq_length": 256, "do_lower_case": false})"},
};
constexpr size_t kNumFiles = sizeof(kFiles) / sizeof(kFiles[0]);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto& scratch = tessera::fuzz::ScratchDir::get();
  const size_t fuzzed = data[0] % kNumFiles;
  for (size_t i = 0; i < kNumFiles; ++i) {
    scratch.write(std::string("model/") + kFiles[i].name,
                  i == fuzzed ? tessera::fuzz::as_text(data + 1, size - 1) : kFiles[i].valid);
  }
  scratch.write("model/model.safetensors", "");  // only its presence is checked
  tessera::model::ModelConfig config;
  (void)tessera::model::load_model_config(scratch.path() + "/model", &config);
  return 0;
}
