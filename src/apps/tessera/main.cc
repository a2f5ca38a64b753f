// tessera: the command-line front end. Global options configure the shared
// AppState; each subcommand lives in its own cmd_<name>.cc.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "app_state.h"
#include "commands.h"
#include "runtime/run_catching.h"
#include "tessera/runtime.h"

namespace tessera::cli {
int exit_code = 0;
}  // namespace tessera::cli

namespace {

int run_cli(int argc, char** argv) {
  using namespace tessera::cli;
  // Blocks of 128 KiB and more (activations, batch buffers) come from mmap and
  // go back to the OS when freed. glibc otherwise raises this threshold after
  // the first large free, and the per-batch buffers then fragment the heap:
  // the 200-pass embed soak grew RSS 19% without this, under 1% with it
  // (docs/DECISIONS.md).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  CLI::App app{
      "tessera: a modular attention runtime and document-embedding engine.\n"
      "Attention backends are interchangeable parts behind one contract; the dispatcher picks\n"
      "one per machine and per problem and falls back when a part fails."};
  app.require_subcommand(1);
  // Global options may also follow the subcommand (`tessera serve --threads 1`):
  // an option a subcommand does not know falls through to here. Subcommands
  // inherit this setting, so it must be set before they are added.
  app.fallthrough();
  app.set_help_all_flag("--help-all", "Show help for every command");
  // `tessera --version` (TEI and every CLI users reach for): the library's
  // version, the one /info and tessera.__version__ report.
  app.set_version_flag("--version", std::string("tessera ") + tessera::library_version());
  AppState state;
  app.add_option("--attention", state.options.attention,
                 "Attention policy: auto | NAME,... | only:NAMES | prefer:NAMES | deny:NAMES | "
                 "fail:NAMES (fault injection: their runs fail) (clauses joined by ';'). Default: "
                 "$TESSERA_ATTENTION, else auto. $TESSERA_CPU_CAP=KIND (x86-avx2, x86-avx512, ...) "
                 "makes the process a lower CPU kind, for tests")
      ->envname("");
  app.add_option("--threads", state.options.threads,
                 "Worker threads (0 = one per core; at most 8 per hardware thread, or 64\n"
                 "on small machines). If the system cannot start them all (a memory or\n"
                 "process limit), the command stops with an error saying how many it could")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--memory-budget", state.options.memory_budget,
                 "Cap on tracked memory, e.g. 512M or 2G; allocations past it are refused");
  app.add_option("--memory-reuse", state.options.memory_reuse,
                 "Freed workspaces of 1 MiB and up kept for the next call instead of returned "
                 "to the system, up to this many bytes (e.g. 192M; 0 = off). Saves page faults "
                 "on every batch; the kept bytes stay in the process's RSS")
      ->capture_default_str();

  // The xla backend reads the plugin path from the environment when it first
  // loads (lazily, after parsing), so the option only has to set it.
  app.add_option_function<std::string>(
      "--pjrt-plugin",
      [](const std::string& path) { ::setenv("TESSERA_PJRT_PLUGIN", path.c_str(), 1); },
      "PJRT plugin file for the xla backend (a CPU plugin, libtpu.so, the jax CUDA plugin). "
      "Default: $TESSERA_PJRT_PLUGIN, else the first known plugin in the Python environment's "
      "site-packages ($VIRTUAL_ENV, then, for a build-tree binary, the project's .venv)");
  add_observe_options(app, &state.observe);

  add_backends_command(app, state);
  add_bench_command(app, state);
  add_attention_command(app, state);
  add_verify_command(app, state);
  add_serve_command(app, state);
  add_tune_command(app, state);
  add_embed_command(app, state);
  add_rerank_command(app, state);
  add_models_command(app, state);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (tessera::Status s = state.finish(); !s.ok() && exit_code == 0) exit_code = fail(s);
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // Reaching the handler is a bug: every parser returns a Status.
  return tessera::run_catching("tessera: internal error", 70 /* EX_SOFTWARE */,
                               [&] { return run_cli(argc, argv); });
}
