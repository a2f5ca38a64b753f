#include "model_options.h"

#include <cstdio>

#include "api/environment.h"
#include "pipeline/model_location.h"
#include "runtime/gemm.h"

namespace tessera::cli {

const char* const kNoModelHint = "or pass --model DIR, or set TESSERA_MODEL=DIR";

void add_model_options(CLI::App* cmd, ModelFlags* flags) {
  cmd->add_option("--model", flags->model,
                  "Model directory (HF / sentence-transformers; `tessera models --explain DIR`\n"
                  "says whether it runs), or the name of a model `tessera models add` registered.\n"
                  "Default: $TESSERA_MODEL, else the data directory's default model\n"
                  "(`tessera models list` shows it)");
  cmd->add_option(
      "--weights", flags->weights,
      "Precision of the Linear layers' weights: f32 (exact), bf16 or int8. bf16 halves\n"
      "their memory and runs the products on the CPU's bf16 matrix units, which\n"
      "pays on CPUs with AMX (Intel Xeon 4th generation and later) or on AMD Zen 4/5\n"
      "(AVX512_BF16); an Intel CPU with AVX512_BF16 but AMX off runs it slower than\n"
      "f32 (all-mpnet-base-v2: 1.67x slower, docs/BENCHMARKS.md);\n"
      "it is refused on CPUs without AVX-512. Accuracy: activations are rounded to\n"
      "bf16 before each product (f32 accumulation), so embeddings move slightly:\n"
      "worst cosine 0.99995 to sentence-transformers' f32 on the golden set, where\n"
      "f32 gives 0.99999+. int8 quarters their memory: per-channel weight scales,\n"
      "each token's activations quantized to 8 bits per product, int32 sums on\n"
      "AMX-INT8, AVX512_VNNI or AVX-VNNI (refused on CPUs without them); worst\n"
      "cosine 0.99+ to f32 (docs/BENCHMARKS.md). Default: $TESSERA_WEIGHTS, else f32");
}

Status load_encoder(const ModelFlags& flags, Context& ctx, std::string* dir,
                    std::unique_ptr<model::Encoder>* out) {
  model::WeightPrecision weights{};
  TESSERA_RETURN_IF_ERROR(api::weights_or_environment(flags.weights, &weights));
  return pipeline::load_encoder(api::model_search(), flags.model, weights, kNoModelHint, ctx, dir,
                                out);
}

std::string describe_weights(const model::Encoder& encoder) {
  const model::WeightPrecision p = encoder.weight_precision();
  std::string s = model::weight_precision_name(p);
  if (p == model::WeightPrecision::kBf16) s += " (oneDNN " + linear_kernel(WeightType::kBf16) + ")";
  if (p == model::WeightPrecision::kInt8) s += " (oneDNN " + linear_kernel(WeightType::kInt8) + ")";
  char mib[32];
  std::snprintf(mib, sizeof(mib), ", %.1f MiB",
                static_cast<double>(encoder.weight_bytes()) / (1 << 20));
  return s + mib;
}

}  // namespace tessera::cli
