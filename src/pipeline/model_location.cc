#include "pipeline/model_location.h"

#include <cstdlib>
#include <filesystem>

#ifndef TESSERA_DEFAULT_MODEL_DIR
#error "TESSERA_DEFAULT_MODEL_DIR must be defined by the build"
#endif

namespace tessera::pipeline {

const char* default_model_dir() { return TESSERA_DEFAULT_MODEL_DIR; }

Status resolve_model_dir(const std::string& flag_value, std::string* out) {
  std::string dir = flag_value;
  std::string source = "--model";
  if (dir.empty()) {
    const char* env = std::getenv("TESSERA_MODEL");
    if (env != nullptr && *env != '\0') {
      dir = env;
      source = "$TESSERA_MODEL";
    } else {
      dir = default_model_dir();
      source = "the default model";
    }
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return not_found("no model directory at " + dir + " (" + source +
                     "): run scripts/install-deps.sh to install the default model "
                     "(all-MiniLM-L6-v2), or pass --model DIR (a Hugging Face / "
                     "sentence-transformers directory; `tessera models` lists the architectures)");
  }
  *out = dir;
  return Status::Ok();
}

Status load_encoder(const std::string& model_flag, const std::string& weights_flag, Context& ctx,
                    std::string* dir, std::unique_ptr<model::Encoder>* out) {
  TESSERA_RETURN_IF_ERROR(resolve_model_dir(model_flag, dir));
  model::EncoderOptions options;
  TESSERA_RETURN_IF_ERROR(model::resolve_weight_precision(weights_flag, &options.weights));
  Status st = model::Encoder::load(*dir, options, ctx, out);
  if (st.code() == StatusCode::kUnsupported && options.weights == model::WeightPrecision::kBf16) {
    return Status(st.code(), st.message() + " (use --weights f32)");
  }
  return st;
}

}  // namespace tessera::pipeline
