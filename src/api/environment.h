// The process environment is read here and nowhere below. The layers under
// the API take values (options, paths, a ModelSearch); the edges fill what
// their caller left empty from the environment, once, with these: Runtime
// and Embedder (so C++ and Python callers), the CLI and the server's start.
#pragma once

#include <string>

#include "model/weight_precision.h"
#include "pipeline/model_location.h"
#include "tessera/dispatcher.h"
#include "tessera/status.h"

namespace tessera::api {

// The variable's value; "" when it is unset or empty.
std::string environment_variable(const char* name);

// `text` when not empty, else $TESSERA_ATTENTION, else auto. An error names
// its source: the option "attention" or the variable.
Status policy_or_environment(const std::string& text, Policy* out);

// `value` when not empty, else $TESSERA_WEIGHTS, else f32; an error names
// the option "weights" or the variable.
Status weights_or_environment(const std::string& value, model::WeightPrecision* out);

// What the model rule (pipeline/model_location.h) looks at: $TESSERA_MODEL,
// the data directory ($TESSERA_DATA_DIR, $XDG_DATA_HOME, $HOME or the
// account's home) and, for a build-tree binary, the checkout's model.
pipeline::ModelSearch model_search();

// ${XDG_CACHE_HOME:-$HOME/.cache}/tessera/tuning.json ("" if neither is set).
std::string default_tuning_path();

// ${XDG_STATE_HOME:-$HOME/.local/state}/tessera/canary.json ("" if neither is set).
std::string default_canary_path();

}  // namespace tessera::api
