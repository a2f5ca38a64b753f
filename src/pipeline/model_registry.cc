#include "pipeline/model_registry.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include "model/config.h"
#include "model/tokenizer.h"

namespace tessera::pipeline {

namespace fs = std::filesystem;

namespace {

constexpr const char* kDefaultFile = "default-model";

// The name a folder is registered under by default: its own, as the user
// wrote it (a link models/all-MiniLM-L6-v2 keeps that name, not its target's).
std::string folder_name(const std::string& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "x/" and "." end in an empty name
  return p.filename().string();
}

Status io_error(const std::string& what, const fs::path& path, const std::error_code& ec) {
  return internal_error(what + " " + path.string() + ": " + ec.message());
}

}  // namespace

std::string ModelRegistry::models_dir() const { return (fs::path(data_dir_) / "models").string(); }

Status ModelRegistry::check_name(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name[0] == '.' ||
      name.find('/') != std::string::npos || name.find('\0') != std::string::npos) {
    return invalid_argument("model name \"" + name +
                            "\": a name is one folder name (not empty, no \"/\", not starting "
                            "with \".\")");
  }
  return Status::Ok();
}

std::vector<RegisteredModel> ModelRegistry::list() const {
  std::vector<RegisteredModel> out;
  std::error_code ec;
  const std::string marked = marked_default();
  for (fs::directory_iterator it(models_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    RegisteredModel m;
    m.name = it->path().filename().string();
    if (m.name.empty() || m.name[0] == '.') continue;
    std::error_code e;
    const bool link = it->is_symlink(e);
    if (!link && !it->is_directory(e)) continue;  // a stray file is no model
    m.path = it->path().string();
    if (link) m.link_target = fs::read_symlink(it->path(), e).string();
    m.present = fs::is_directory(it->path(), e);
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(),
            [](const RegisteredModel& a, const RegisteredModel& b) { return a.name < b.name; });
  const std::string def =
      !marked.empty() ? marked : (out.size() == 1 ? out.front().name : std::string());
  for (RegisteredModel& m : out) m.is_default = m.name == def;
  return out;
}

std::string ModelRegistry::marked_default() const {
  std::ifstream in(fs::path(data_dir_) / kDefaultFile);
  std::string name;
  if (!in || !std::getline(in, name)) return "";
  while (!name.empty() && (name.back() == '\r' || name.back() == ' ')) name.pop_back();
  return check_name(name).ok() ? name : "";
}

std::string ModelRegistry::default_name() const {
  if (std::string marked = marked_default(); !marked.empty()) return marked;
  const std::vector<RegisteredModel> models = list();
  return models.size() == 1 ? models.front().name : "";
}

std::string ModelRegistry::find(const std::string& name) const {
  if (!check_name(name).ok()) return "";
  const fs::path p = fs::path(models_dir()) / name;
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(p, ec);
  if (ec || !(fs::is_directory(link) || fs::is_symlink(link))) return "";
  return p.string();
}

std::string ModelRegistry::registered_names() const {
  std::string names;
  for (const RegisteredModel& m : list()) names += (names.empty() ? "" : ", ") + m.name;
  return names.empty() ? "none" : names;
}

Status ModelRegistry::write_default(const std::string& name) {
  const fs::path target = fs::path(data_dir_) / kDefaultFile;
  const fs::path work = target.string() + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(work, std::ios::trunc);
    out << name << "\n";
    if (!out.flush()) return internal_error("cannot write " + work.string());
  }
  std::error_code ec;
  fs::rename(work, target, ec);
  if (ec) {
    fs::remove(work, ec);
    return io_error("cannot write", target, ec);
  }
  return Status::Ok();
}

Status ModelRegistry::add(const std::string& dir, const AddModelOptions& options,
                          RegisteredModel* added) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return not_found(dir +
                     ": not a directory (a Hugging Face / sentence-transformers model "
                     "folder: config.json, tokenizer.json, model.safetensors)");
  }
  const std::string name = options.name.empty() ? folder_name(dir) : options.name;
  TESSERA_RETURN_IF_ERROR(check_name(name));
  // What every front end needs before it loads the weights: the configs, the
  // weights file present, the tokenizer. `tessera models --explain` says more.
  model::ModelConfig config;
  Status st = model::load_model_config(dir, &config);
  model::Tokenizer tokenizer;
  if (st.ok()) st = model::Tokenizer::load(config.transformer_dir, &tokenizer);
  if (!st.ok()) {
    return Status(st.code(), dir + " is not a model tessera runs: " + st.message() +
                                 " (`tessera models --explain " + dir + "` says more)");
  }
  const fs::path models = models_dir();
  const fs::path path = models / name;
  if (!find(name).empty() || fs::exists(fs::symlink_status(path, ec))) {
    return {StatusCode::kInvalidArgument,
            "a model named " + name + " is already registered (" + path.string() +
                "): `tessera models remove " + name + "` first, or add this one under another name",
            ""};
  }
  fs::create_directories(models, ec);
  if (ec) return io_error("cannot create", models, ec);
  const fs::path source = fs::absolute(dir).lexically_normal();
  if (options.link) {
    fs::create_directory_symlink(source, path, ec);
    if (ec) return io_error("cannot link", path, ec);
  } else {
    // Copied beside the target and renamed into place, so a copy cut short
    // (disk full, interrupted) never looks like a registered model.
    const fs::path work = models / ("." + name + ".partial-" + std::to_string(::getpid()));
    fs::remove_all(work, ec);
    fs::create_directory(work, ec);
    if (ec) return io_error("cannot create", work, ec);
    for (fs::directory_iterator it(source, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string entry = it->path().filename().string();
      if (entry.empty() || entry[0] == '.') continue;  // .git, .cache: not the model
      // Links are followed: a Hugging Face cache's files are links to blobs.
      fs::copy(it->path(), work / entry, fs::copy_options::recursive, ec);
      if (ec) {
        std::error_code ignored;
        fs::remove_all(work, ignored);
        return io_error("cannot copy " + it->path().string() + " to", work / entry, ec);
      }
    }
    if (!ec) fs::rename(work, path, ec);
    if (ec) {
      std::error_code ignored;
      fs::remove_all(work, ignored);
      return io_error("cannot copy the model to", path, ec);
    }
  }
  const std::string marked = marked_default();
  if (options.make_default || marked.empty() || find(marked).empty()) {
    TESSERA_RETURN_IF_ERROR(write_default(name));
  }
  if (added != nullptr) {
    added->name = name;
    added->path = path.string();
    added->link_target = options.link ? source.string() : "";
    added->present = true;
    added->is_default = default_name() == name;
  }
  return Status::Ok();
}

Status ModelRegistry::remove(const std::string& name) {
  TESSERA_RETURN_IF_ERROR(check_name(name));
  const std::string path = find(name);
  if (path.empty()) {
    return not_found("no model named " + name + " in " + models_dir() +
                     " (registered: " + registered_names() + ")");
  }
  std::error_code ec;
  fs::remove_all(path, ec);  // a link: the link, never its target
  if (ec) return io_error("cannot remove", path, ec);
  if (marked_default() == name) {
    fs::remove(fs::path(data_dir_) / kDefaultFile, ec);
    if (ec) return io_error("cannot unmark the default in", fs::path(data_dir_) / kDefaultFile, ec);
  }
  return Status::Ok();
}

Status ModelRegistry::set_default(const std::string& name) {
  TESSERA_RETURN_IF_ERROR(check_name(name));
  if (find(name).empty()) {
    return not_found("no model named " + name + " in " + models_dir() +
                     " (registered: " + registered_names() +
                     "; `tessera models add DIR` "
                     "registers one)");
  }
  return write_default(name);
}

}  // namespace tessera::pipeline
