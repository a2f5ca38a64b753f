// `tessera models`: the architectures and tokenizers this build runs, and
// `--explain DIR`: what tessera recognises in a model directory, or exactly
// why it cannot load it.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "model/explain.h"

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
    for (const auto& [key, value] : e.facts)
      std::printf("%-17s %s\n", (key + ":").c_str(), value.c_str());
    if (e.status.ok()) {
      std::printf("%-17s ok: tessera runs this model\n", "status:");
    } else {
      std::printf("%-17s not loadable: %s\n", "status:", e.status.to_string().c_str());
    }
  }
  return e.status.ok() ? 0 : 1;
}

}  // namespace

void add_models_command(CLI::App& app, AppState& state) {
  auto* cmd = app.add_subcommand(
      "models",
      "List the model architectures and tokenizers this build runs, or explain what it\n"
      "recognises in one model directory (architecture, head, shapes, positions, tokenizer,\n"
      "pooling, outputs) or exactly why it cannot load it.");
  static std::string dir;
  static bool json = false;
  cmd->add_option("--explain", dir, "Model directory to explain (HF or sentence-transformers)");
  cmd->add_flag("--json", json, "Machine-readable output (with --explain)");
  cmd->callback([&state] {
    if (dir.empty()) {
      std::printf("%s", model::supported_models().c_str());
      exit_code = 0;
      return;
    }
    if (Status s = state.init(); !s.ok()) {
      exit_code = fail(s);
      return;
    }
    exit_code = explain(state, dir, json);
  });
}

}  // namespace tessera::cli
