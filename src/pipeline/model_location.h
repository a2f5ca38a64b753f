// Where `tessera embed` (and the server) find their model when none is named:
// --model DIR, else $TESSERA_MODEL, else the compiled-in default
// <source>/models/all-MiniLM-L6-v2 (the link scripts/install-deps.sh makes).
#pragma once

#include <memory>
#include <string>

#include "model/encoder.h"
#include "tessera/context.h"
#include "tessera/status.h"

namespace tessera::pipeline {

const char* default_model_dir();

// Picks the directory by the rule above and checks that it exists; the error
// says where the path came from and how to get a model.
Status resolve_model_dir(const std::string& flag_value, std::string* out);

// Resolves the directory (above) and the weight precision (--weights, else
// $TESSERA_WEIGHTS, else f32) and loads the encoder; *dir receives the
// directory. The CLI and the Embedder API load models only through here.
Status load_encoder(const std::string& model_flag, const std::string& weights_flag, Context& ctx,
                    std::string* dir, std::unique_ptr<model::Encoder>* out);

}  // namespace tessera::pipeline
