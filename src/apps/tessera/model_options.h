// The model options `tessera embed` and `tessera serve` share: where the
// model is (--model) and how its weights are held (--weights).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "model/encoder.h"
#include "tessera/context.h"

namespace tessera::cli {

// What the CLI adds to the library's "no model" error (model_location.h).
extern const char* const kNoModelHint;

struct ModelFlags {
  std::string model;    // "": $TESSERA_MODEL, else the data directory's default
  std::string weights;  // "": $TESSERA_WEIGHTS, else f32
};

void add_model_options(CLI::App* cmd, ModelFlags* flags);

// Resolves both flags and loads the encoder; *dir receives the directory.
Status load_encoder(const ModelFlags& flags, Context& ctx, std::string* dir,
                    std::unique_ptr<model::Encoder>* out);

// "bf16 (oneDNN brg:avx512_core_amx_bf16), 22.6 MiB": what the summary and
// the start-up banner say about the weights.
std::string describe_weights(const model::Encoder& encoder);

}  // namespace tessera::cli
