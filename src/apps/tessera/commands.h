// Every CLI command is one file cmd_<name>.cc defining add_<name>_command,
// registered by one line in main.cc. A command's callback stores its exit
// code in `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

#include "app_state.h"

namespace tessera::cli {

extern int exit_code;

void add_backends_command(CLI::App& app, AppState& state);
void add_bench_command(CLI::App& app, AppState& state);
void add_attention_command(CLI::App& app, AppState& state);
void add_verify_command(CLI::App& app, AppState& state);
void add_serve_command(CLI::App& app, AppState& state);
void add_tune_command(CLI::App& app, AppState& state);
void add_embed_command(CLI::App& app, AppState& state);
void add_models_command(CLI::App& app, AppState& state);
void add_rerank_command(CLI::App& app, AppState& state);

}  // namespace tessera::cli
