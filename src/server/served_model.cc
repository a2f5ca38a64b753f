#include "server/served_model.h"

#include <filesystem>

namespace tessera::server {

namespace {

// "models/all-MiniLM-L6-v2/" -> "all-MiniLM-L6-v2".
std::string model_id(const std::string& dir) {
  std::filesystem::path p(dir);
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

}  // namespace

ModelInfo describe_model(const model::Encoder& encoder) {
  ModelInfo info;
  info.id = model_id(encoder.model_dir());
  info.dir = encoder.model_dir();
  info.dim = encoder.dim();
  info.max_length = encoder.max_seq_length();
  info.vocab_size = encoder.vocab_size();
  info.normalizes = encoder.config().normalize;
  info.pooling = model::pooling_name(encoder.config().pooling);
  info.weight_bytes = encoder.weight_bytes();
  info.weights = model::weight_precision_name(encoder.weight_precision());
  return info;
}

}  // namespace tessera::server
