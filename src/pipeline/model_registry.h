// The models of a data directory (model_location.h says which directory):
// what `tessera models add / list / remove / default` manage, so an installed
// tessera has a model that survives the checkout it was built from.
//
//   DATA/models/NAME/    a model folder: a copy, or a symbolic link (--link)
//   DATA/default-model   the default's NAME, one line
//
// The default is the model default-model names, else the only model there
// is. A folder copied into DATA/models by hand is a registered model too.
#pragma once

#include <string>
#include <vector>

#include "tessera/status.h"

namespace tessera::pipeline {

struct RegisteredModel {
  std::string name;
  std::string path;         // DATA/models/NAME
  std::string link_target;  // where a link points; "" for a copy
  bool present = false;     // the folder (or the link's target) is there
  bool is_default = false;
};

struct AddModelOptions {
  std::string name;           // "": the folder's own name
  bool link = false;          // a symbolic link to the folder instead of a copy
  bool make_default = false;  // also when no default is marked yet
};

class ModelRegistry {
 public:
  explicit ModelRegistry(std::string data_dir) : data_dir_(std::move(data_dir)) {}

  const std::string& data_dir() const { return data_dir_; }
  std::string models_dir() const;  // DATA/models

  // By name; no folder is no models. Names starting with "." (work folders
  // of an add in progress) are not models.
  std::vector<RegisteredModel> list() const;
  // The name default-model holds, else the only model's; "" when neither.
  // The model it names may be missing (removed by hand): callers check.
  std::string default_name() const;
  // The name default-model holds ("" when none).
  std::string marked_default() const;
  // DATA/models/NAME when NAME is registered (present or not), else "".
  std::string find(const std::string& name) const;

  // Checks that `dir` is a model tessera reads (its configs, its tokenizer,
  // its weights file), then copies it (all but hidden top-level entries such
  // as .git) or links it to DATA/models/NAME. It becomes the default when
  // asked or when no default is marked yet (the first model added).
  Status add(const std::string& dir, const AddModelOptions& options, RegisteredModel* added);
  // Deletes DATA/models/NAME (a link: the link only); removing the default
  // unmarks it.
  Status remove(const std::string& name);
  Status set_default(const std::string& name);

  // A name is one path component: no "/", not empty, not starting with ".".
  static Status check_name(const std::string& name);

 private:
  Status write_default(const std::string& name);
  std::string registered_names() const;  // "a, b" or "none"

  std::string data_dir_;
};

}  // namespace tessera::pipeline
