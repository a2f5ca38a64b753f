// `tessera models`: the architectures and tokenizers this build runs, and
// `--explain DIR`: what tessera recognises in a model directory, or exactly
// why it cannot load it. `models add / list / remove / default`: the models
// of the data directory (pipeline/model_registry.h), where an installed
// tessera finds its default model.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "api/environment.h"
#include "commands.h"
#include "model/explain.h"
#include "pipeline/model_location.h"
#include "pipeline/model_registry.h"

namespace tessera::cli {

namespace {

int explain(AppState& state, const std::string& dir, bool json) {
  const model::ModelExplanation e = model::explain_model(dir, state.context());
  if (json) {
    nlohmann::json facts = nlohmann::json::object();
    for (const auto& [key, value] : e.facts) facts[key] = value;
    nlohmann::json out = {{"facts", facts}, {"ok", e.status.ok()}};
    if (!e.status.ok()) out["error"] = e.status.to_string();
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    for (const auto& [key, value] : e.facts) {
      std::printf("%-17s %s\n", (key + ":").c_str(), value.c_str());
    }
    if (e.status.ok()) {
      std::printf("%-17s ok: tessera runs this model\n", "status:");
    } else {
      std::printf("%-17s not loadable: %s\n", "status:", e.status.to_string().c_str());
    }
  }
  return e.status.ok() ? 0 : 1;
}

// Usage and model errors exit 2, failures of the file system 1.
int fail_status(const Status& s) { return fail(s, s.code() == StatusCode::kInternal ? 1 : 2); }

Status open_registry(const pipeline::ModelSearch& search) {
  if (search.data_dir.empty()) {
    return unavailable("no data directory: set TESSERA_DATA_DIR (or HOME, or XDG_DATA_HOME)");
  }
  return Status::Ok();
}

std::string describe(const pipeline::RegisteredModel& m) {
  std::string d = m.path;
  if (!m.link_target.empty()) d += " -> " + m.link_target;
  if (!m.present) d += " (missing)";
  return d;
}

int list_models(bool json) {
  const pipeline::ModelSearch search = api::model_search();
  if (Status s = open_registry(search); !s.ok()) return fail_status(s);
  const pipeline::ModelRegistry registry(search.data_dir);
  const std::vector<pipeline::RegisteredModel> models = registry.list();
  pipeline::ResolvedModel resolved;
  const Status found = pipeline::resolve_model(search, "", &resolved);
  if (json) {
    nlohmann::json out = {{"data_dir", search.data_dir},
                          {"data_dir_source", search.data_dir_source},
                          {"models", nlohmann::json::array()},
                          {"default", nullptr}};
    for (const pipeline::RegisteredModel& m : models) {
      out["models"].push_back({{"name", m.name},
                               {"path", m.path},
                               {"link", m.link_target.empty() ? nlohmann::json(nullptr)
                                                              : nlohmann::json(m.link_target)},
                               {"present", m.present},
                               {"default", m.is_default}});
      if (m.is_default) out["default"] = m.name;
    }
    out["without_model"] = found.ok()
                               ? nlohmann::json{{"dir", resolved.dir}, {"source", resolved.source}}
                               : nlohmann::json{{"error", found.message()}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("data directory: %s (from %s)\n", search.data_dir.c_str(),
              search.data_dir_source.c_str());
  if (models.empty()) std::printf("no models registered (`tessera models add DIR`)\n");
  int width = 0;
  for (const pipeline::RegisteredModel& m : models) {
    width = std::max(width, static_cast<int>(m.name.size() + (m.is_default ? 10 : 0)));
  }
  for (const pipeline::RegisteredModel& m : models) {
    const std::string name = m.name + (m.is_default ? " (default)" : "");
    std::printf("  %-*s  %s\n", width, name.c_str(), describe(m).c_str());
  }
  if (found.ok()) {
    std::printf("without --model: %s (%s)\n", resolved.dir.c_str(), resolved.source.c_str());
  } else {
    std::printf("without --model: %s\n", found.message().c_str());
  }
  return 0;
}

int add_model(const std::string& given, pipeline::AddModelOptions options) {
  const pipeline::ModelSearch search = api::model_search();
  if (Status s = open_registry(search); !s.ok()) return fail_status(s);
  // A Hub id (not a folder here) is its snapshot in the local Hub cache,
  // registered under the model's name.
  std::string dir = given;
  std::error_code ec;
  if (!std::filesystem::is_directory(given, ec) && pipeline::looks_like_hub_id(given) &&
      !search.hub_cache.empty()) {
    if (Status s = pipeline::find_hub_model(search, given, &dir); !s.ok()) {
      return fail_status(Status(s.code(), given + ": not in " + s.message()));
    }
    if (options.name.empty()) {
      const std::string id = given.substr(0, given.find('@'));
      options.name = id.substr(id.find('/') + 1);
    }
  }
  pipeline::ModelRegistry registry(search.data_dir);
  pipeline::RegisteredModel added;
  if (Status s = registry.add(dir, options, &added); !s.ok()) return fail_status(s);
  std::printf("registered %s: %s (%s %s)%s\n", added.name.c_str(), added.path.c_str(),
              options.link ? "a link to" : "a copy of", given.c_str(),
              added.is_default ? ", the default model" : "");
  return 0;
}

int remove_model(const std::string& name) {
  const pipeline::ModelSearch search = api::model_search();
  if (Status s = open_registry(search); !s.ok()) return fail_status(s);
  pipeline::ModelRegistry registry(search.data_dir);
  const bool was_default = registry.default_name() == name;
  const std::string path = registry.find(name);
  if (Status s = registry.remove(name); !s.ok()) return fail_status(s);
  std::printf("removed %s (%s)\n", name.c_str(), path.c_str());
  if (was_default) {
    const std::string now = registry.default_name();
    std::printf("%s\n", now.empty() ? "no default model now (`tessera models default NAME`)"
                                    : ("the default model is now " + now).c_str());
  }
  return 0;
}

int set_default(const std::string& name) {
  const pipeline::ModelSearch search = api::model_search();
  if (Status s = open_registry(search); !s.ok()) return fail_status(s);
  pipeline::ModelRegistry registry(search.data_dir);
  if (Status s = registry.set_default(name); !s.ok()) return fail_status(s);
  std::printf("the default model is now %s (%s)\n", name.c_str(), registry.find(name).c_str());
  return 0;
}

// `tessera models`' last lines: the registered models, in one line.
void print_registered() {
  const pipeline::ModelSearch search = api::model_search();
  if (search.data_dir.empty()) return;
  const pipeline::ModelRegistry registry(search.data_dir);
  std::string names;
  for (const pipeline::RegisteredModel& m : registry.list()) {
    names += (names.empty() ? "" : ", ") + m.name + (m.is_default ? " (default)" : "");
  }
  std::printf("registered models (%s): %s\n", registry.models_dir().c_str(),
              names.empty() ? "none (`tessera models add DIR`)" : names.c_str());
}

}  // namespace

void add_models_command(CLI::App& app, AppState& state) {
  auto* cmd = app.add_subcommand(
      "models",
      "List the model architectures and tokenizers this build runs, or explain what it\n"
      "recognises in one model directory (architecture, head, shapes, positions, tokenizer,\n"
      "pooling, outputs) or exactly why it cannot load it. `add`, `list`, `remove` and\n"
      "`default` manage the models of the data directory ($TESSERA_DATA_DIR, else\n"
      "$XDG_DATA_HOME/tessera, else ~/.local/share/tessera), where tessera finds its\n"
      "model when no --model or $TESSERA_MODEL names one.");
  cmd->require_subcommand(0, 1);
  static std::string dir;
  static bool json = false;
  cmd->add_option("--explain", dir,
                  "Model directory (HF or sentence-transformers), or a registered model's name, "
                  "to explain");
  cmd->add_flag("--json", json, "Machine-readable output (with --explain)");

  auto* add = cmd->add_subcommand(
      "add",
      "Register a model folder in the data directory, as models/NAME: checks that tessera\n"
      "reads it (configs, tokenizer, weights file), then copies it (its hidden entries such\n"
      "as .git left out) or, with --link, links to it. The first model added becomes the\n"
      "default, the model every command and the C++ and Python APIs use when none is named.");
  static std::string add_dir;
  static pipeline::AddModelOptions add_options;
  add->add_option("DIR", add_dir,
                  "The model folder (HF / sentence-transformers), or a Hub id (ORG/NAME[@REV])\n"
                  "in the local Hugging Face cache")
      ->required();
  add->add_option("--name", add_options.name, "The name to register it under (default: DIR's)");
  add->add_flag("--default", add_options.make_default, "Make it the default model");
  add->add_flag("--link", add_options.link,
                "Link to DIR instead of copying it (DIR must then stay where it is)");
  add->callback([] { exit_code = add_model(add_dir, add_options); });

  auto* list = cmd->add_subcommand(
      "list",
      "The registered models, which one is the default, and the model a command uses\n"
      "without --model");
  static bool list_json = false;
  list->add_flag("--json", list_json, "Machine-readable output");
  list->callback([] { exit_code = list_models(list_json); });

  auto* remove = cmd->add_subcommand(
      "remove", "Delete a registered model (a link: the link only, never the folder it names)");
  static std::string remove_name;
  remove->add_option("NAME", remove_name, "The registered model")->required();
  remove->callback([] { exit_code = remove_model(remove_name); });

  auto* def = cmd->add_subcommand("default", "Make a registered model the default");
  static std::string default_name;
  def->add_option("NAME", default_name, "The registered model")->required();
  def->callback([] { exit_code = set_default(default_name); });

  cmd->callback([cmd, &state] {
    if (!cmd->get_subcommands().empty()) return;  // add, list, remove, default
    if (dir.empty()) {
      std::printf("%s", model::supported_models().c_str());
      print_registered();
      exit_code = 0;
      return;
    }
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) {
      // A registered model's name explains that model.
      const pipeline::ModelSearch search = api::model_search();
      if (!search.data_dir.empty()) {
        const std::string path = pipeline::ModelRegistry(search.data_dir).find(dir);
        if (!path.empty()) dir = path;
      }
    }
    if (Status s = state.init(); !s.ok()) {
      exit_code = fail(s);
      return;
    }
    exit_code = explain(state, dir, json);
  });
}

}  // namespace tessera::cli
