#include "pipeline/model_location.h"

#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "pipeline/model_registry.h"

namespace tessera::pipeline {

namespace fs = std::filesystem;

namespace {

bool is_dir(const std::string& path) {
  std::error_code ec;
  return !path.empty() && fs::is_directory(path, ec);
}

bool hub_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

// Steps 1 and 2: a directory, else a registered model's name, else a Hub id
// in the local cache.
Status named_model(const ModelSearch& search, const std::string& value, const std::string& what,
                   ResolvedModel* out) {
  if (is_dir(value)) {
    *out = {value, what};
    return Status::Ok();
  }
  std::string registered = "no data directory";
  if (!search.data_dir.empty()) {
    const ModelRegistry registry(search.data_dir);
    if (ModelRegistry::check_name(value).ok()) {
      if (const std::string path = registry.find(value); !path.empty()) {
        if (!is_dir(path)) {
          return not_found(what + " \"" + value + "\": the registered model " + path +
                           " is missing (a link to a folder that is gone?): `tessera models "
                           "remove " +
                           value + "`, then add it again");
        }
        *out = {path, what + " (registered model " + value + ")"};
        return Status::Ok();
      }
    }
    registered.clear();
    for (const RegisteredModel& m : registry.list()) {
      registered += (registered.empty() ? "" : ", ") + m.name;
    }
    registered =
        (registered.empty() ? "none" : registered) + " registered in " + registry.models_dir();
  }
  std::string hub;
  if (looks_like_hub_id(value)) {
    std::string dir;
    const Status s = find_hub_model(search, value, &dir);
    if (s.ok()) {
      *out = {dir,
              what + " (Hub id " + value + " in the Hugging Face cache " + search.hub_cache + ")"};
      return Status::Ok();
    }
    hub = ", nor in " + s.message();
  }
  return not_found(what + " \"" + value +
                   "\" is neither a model directory nor the name of a registered model (" +
                   registered + ")" + hub);
}

}  // namespace

bool looks_like_hub_id(const std::string& value) {
  const size_t at = value.find('@');
  const std::string id = value.substr(0, at);
  if (at != std::string::npos && at + 1 == value.size()) return false;
  const size_t slash = id.find('/');
  if (id.empty() || id.find('/', slash == std::string::npos ? 0 : slash + 1) != std::string::npos) {
    return false;
  }
  for (const std::string& part :
       {id.substr(0, slash),
        slash == std::string::npos ? std::string("x") : id.substr(slash + 1)}) {
    if (part.empty() || part.front() == '.' || part.size() > 96) return false;
    for (char c : part) {
      if (!hub_name_char(c)) return false;
    }
  }
  return true;
}

void hub_cache_from(const char* hf_hub_cache, const char* hf_home, const char* xdg_cache_home,
                    const char* home, std::string* dir, std::string* source) {
  const auto set = [&](const fs::path& path, const char* from) {
    *dir = path.lexically_normal().string();
    *source = from;
  };
  const auto given = [](const char* v) { return v != nullptr && *v != '\0'; };
  dir->clear();
  source->clear();
  if (given(hf_hub_cache)) {
    set(hf_hub_cache, "$HF_HUB_CACHE");
  } else if (given(hf_home)) {
    set(fs::path(hf_home) / "hub", "$HF_HOME");
  } else if (given(xdg_cache_home) && xdg_cache_home[0] == '/') {
    set(fs::path(xdg_cache_home) / "huggingface" / "hub", "$XDG_CACHE_HOME");
  } else if (given(home) && home[0] == '/') {
    set(fs::path(home) / ".cache" / "huggingface" / "hub", "$HOME");
  }
}

Status hub_snapshot(const std::string& cache, const std::string& id, std::string* dir) {
  if (!looks_like_hub_id(id)) {
    return invalid_argument("\"" + id + "\" is not a Hugging Face Hub id (ORG/NAME[@REVISION])");
  }
  const size_t at = id.find('@');
  const std::string name = id.substr(0, at);
  const std::string revision = at == std::string::npos ? "main" : id.substr(at + 1);
  std::string folder = "models--" + name;
  for (size_t p = folder.find('/'); p != std::string::npos; p = folder.find('/', p)) {
    folder.replace(p, 1, "--");
  }
  const fs::path repo = fs::path(cache) / folder;
  if (!is_dir(repo.string())) return not_found("no " + repo.string());
  std::string commit = revision;
  const fs::path ref = repo / "refs" / revision;
  std::error_code ec;
  if (fs::is_regular_file(ref, ec)) {
    std::ifstream in(ref);
    std::getline(in, commit);
    while (!commit.empty() &&
           (commit.back() == '\n' || commit.back() == '\r' || commit.back() == ' ')) {
      commit.pop_back();
    }
  }
  const bool hash =
      commit.size() == 40 && commit.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!hash) {
    return not_found("no " + ref.string() + " (revision " + revision +
                     " was never downloaded; its snapshots: " + repo.string() + "/snapshots)");
  }
  const fs::path snapshot = repo / "snapshots" / commit;
  if (!is_dir(snapshot.string())) {
    return not_found("no " + snapshot.string() + " (" + ref.string() + " names it)");
  }
  *dir = snapshot.string();
  return Status::Ok();
}

Status find_hub_model(const ModelSearch& search, const std::string& id, std::string* dir) {
  if (search.hub_cache.empty()) {
    return not_found(
        "the Hugging Face cache, which has no folder here ($HF_HUB_CACHE, $HF_HOME and $HOME "
        "are unset)");
  }
  Status s = hub_snapshot(search.hub_cache, id, dir);
  if (s.ok() || s.code() != StatusCode::kNotFound) return s;
  return not_found("the Hugging Face cache (" + s.message() + "; the cache is " + search.hub_cache +
                   ", from " + search.hub_cache_source + "): `hf download " +
                   id.substr(0, id.find('@')) + "` fetches it (tessera itself never downloads)");
}

void data_dir_from(const char* tessera_data_dir, const char* xdg_data_home, const char* home,
                   std::string* dir, std::string* source) {
  const auto set = [&](const fs::path& path, const char* from) {
    *dir = path.lexically_normal().string();
    *source = from;
  };
  dir->clear();
  source->clear();
  if (tessera_data_dir != nullptr && *tessera_data_dir != '\0') {
    set(tessera_data_dir, "$TESSERA_DATA_DIR");
  } else if (xdg_data_home != nullptr && xdg_data_home[0] == '/') {
    set(fs::path(xdg_data_home) / "tessera", "$XDG_DATA_HOME");
  } else if (home != nullptr && home[0] == '/') {
    set(fs::path(home) / ".local" / "share" / "tessera", "$HOME");
  }
}

Status resolve_model(const ModelSearch& search, const std::string& model, ResolvedModel* out) {
  if (!model.empty()) return named_model(search, model, "model", out);
  if (!search.env_model.empty()) {
    return named_model(search, search.env_model, "$TESSERA_MODEL", out);
  }
  std::string data = "no data directory ($TESSERA_DATA_DIR and $HOME are unset)";
  if (!search.data_dir.empty()) {
    const ModelRegistry registry(search.data_dir);
    const std::string name = registry.default_name();
    const std::string path = name.empty() ? "" : registry.find(name);
    if (!name.empty() && is_dir(path)) {
      *out = {path, "the default model " + name + " of " + search.data_dir};
      return Status::Ok();
    }
    if (!name.empty()) {
      return not_found("the default model " + name + " of " + search.data_dir + " is missing (" +
                       (path.empty() ? registry.models_dir() + "/" + name + " does not exist"
                                     : path + " is a link to a folder that is gone") +
                       "): `tessera models default NAME` picks another, `tessera models add DIR "
                       "--default` registers one");
    }
    const size_t count = registry.list().size();
    data = "the data directory " + search.data_dir + " (from " + search.data_dir_source + ") has " +
           (count == 0 ? std::string("no model registered")
                       : std::to_string(count) +
                             " models registered and none marked the default (`tessera models "
                             "default NAME` marks one)");
  }
  if (is_dir(search.checkout_model)) {
    *out = {search.checkout_model, "this build's default model"};
    return Status::Ok();
  }
  std::string message = "no model: none given, $TESSERA_MODEL is not set, and " + data;
  if (!search.checkout_model.empty()) {
    message += "; this build's default " + search.checkout_model +
               " is missing too (scripts/install-deps.sh installs it)";
  }
  message += ". Register a model folder (Hugging Face / sentence-transformers) with `tessera " +
             std::string("models add DIR`");
  if (!search.data_dir.empty()) {
    message += " or copy it to " + ModelRegistry(search.data_dir).models_dir() + "/NAME";
  }
  return unavailable(message);
}

Status resolve_model_dir(const ModelSearch& search, const std::string& model,
                         const std::string& hint, std::string* out) {
  ResolvedModel resolved;
  Status st = resolve_model(search, model, &resolved);
  if (st.code() == StatusCode::kUnavailable && !hint.empty()) {
    return Status(st.code(), st.message() + "; " + hint);
  }
  TESSERA_RETURN_IF_ERROR(st);
  *out = resolved.dir;
  return Status::Ok();
}

Status load_encoder(const ModelSearch& search, const std::string& model,
                    model::WeightPrecision weights, const std::string& hint, Context& ctx,
                    std::string* dir, std::unique_ptr<model::Encoder>* out) {
  TESSERA_RETURN_IF_ERROR(resolve_model_dir(search, model, hint, dir));
  model::EncoderOptions options;
  options.weights = weights;
  Status st = model::Encoder::load(*dir, options, ctx, out);
  if (st.code() == StatusCode::kUnsupported && weights != model::WeightPrecision::kF32) {
    return {st.code(),
            std::string("weights ") + model::weight_precision_name(weights) + ": " + st.message() +
                "; f32 weights run on every CPU",
            "weights"};
  }
  return st;
}

}  // namespace tessera::pipeline
