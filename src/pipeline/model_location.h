// Where a model comes from: one rule for the CLI, the server, the C++
// Embedder and Python (docs/DECISIONS.md, "Installed models: a data
// directory, not the checkout"). The first that applies:
//   1. the model the caller names (--model, EmbedderOptions.model_dir,
//      Embedder(model_dir)): a directory, else the name of a registered model,
//      else a Hugging Face Hub id (ORG/NAME[@REVISION]) found in the local
//      Hub cache (hub_snapshot below; never the network);
//   2. $TESSERA_MODEL, read the same way;
//   3. the data directory's default model (model_registry.h): the data
//      directory is $TESSERA_DATA_DIR, else $XDG_DATA_HOME/tessera, else
//      ~/.local/share/tessera;
//   4. a build-tree binary only (runtime/build_tree.h): the checkout's
//      models/all-MiniLM-L6-v2, the link scripts/install-deps.sh makes.
// A model named in 1-3 that is not there is an error (kNotFound), never a
// fall-through to the next; nothing named and nothing found is kUnavailable,
// whose message says how to register a model, followed by the front end's
// own hint. The environment reaches it as a ModelSearch the edges read
// (api/environment.h: model_search()).
#pragma once

#include <memory>
#include <string>

#include "model/encoder.h"
#include "tessera/context.h"
#include "tessera/status.h"

namespace tessera::pipeline {

// What the rule looks at: read from the environment by the edges
// (api::model_search()), given explicitly by tests.
struct ModelSearch {
  std::string env_model;        // $TESSERA_MODEL; "" when unset
  std::string data_dir;         // "" when there is none (no variable, no home)
  std::string data_dir_source;  // "$TESSERA_DATA_DIR", "$XDG_DATA_HOME", "$HOME"
  std::string checkout_model;   // step 4's folder; "" outside a build tree
  // The Hugging Face Hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else
  // $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub ("" when
  // none can be named), and the variable it came from.
  std::string hub_cache;
  std::string hub_cache_source;
};

// The Hub cache for these values of $HF_HUB_CACHE, $HF_HOME, $XDG_CACHE_HOME
// and $HOME (nullptr: unset), as huggingface_hub finds it.
void hub_cache_from(const char* hf_hub_cache, const char* hf_home, const char* xdg_cache_home,
                    const char* home, std::string* dir, std::string* source);

// The snapshot folder of Hub id `id` ("ORG/NAME" or "NAME", optionally
// "@REVISION": a branch or tag under refs/, or a commit hash) in `cache`, as
// huggingface_hub lays it out: models--ORG--NAME/refs/REVISION holds the
// commit, models--ORG--NAME/snapshots/COMMIT the files. kNotFound saying
// what is missing; kInvalidArgument when `id` cannot be a Hub id.
Status hub_snapshot(const std::string& cache, const std::string& id, std::string* dir);
// The snapshot folder of Hub id `id` in the search's cache (hub_snapshot);
// kNotFound saying where it looked and the `hf download` command that
// fetches it.
Status find_hub_model(const ModelSearch& search, const std::string& id, std::string* dir);
// Whether `value` has a Hub id's shape (a name, or ORG/NAME, of the
// characters the Hub allows, with an optional @REVISION).
bool looks_like_hub_id(const std::string& value);

// The data directory and the variable it came from, for these values of
// $TESSERA_DATA_DIR, $XDG_DATA_HOME and $HOME (nullptr: unset). A relative
// $XDG_DATA_HOME is ignored, as the XDG spec says.
void data_dir_from(const char* tessera_data_dir, const char* xdg_data_home, const char* home,
                   std::string* dir, std::string* source);

struct ResolvedModel {
  std::string dir;
  std::string source;  // "the given model", "$TESSERA_MODEL", "the data directory's default", ...
};

// The rule above for `model` ("" when the caller names none).
Status resolve_model(const ModelSearch& search, const std::string& model, ResolvedModel* out);

// The rule's directory. `hint` ends the kUnavailable message (what this
// front end's user can do: "pass --model DIR", ...).
Status resolve_model_dir(const ModelSearch& search, const std::string& model,
                         const std::string& hint, std::string* out);

// Resolves the directory (above) and loads the encoder with `weights`; *dir
// receives the directory. The CLI and the Embedder API load models only
// through here.
Status load_encoder(const ModelSearch& search, const std::string& model,
                    model::WeightPrecision weights, const std::string& hint, Context& ctx,
                    std::string* dir, std::unique_ptr<model::Encoder>* out);

}  // namespace tessera::pipeline
