// The observability flags every command shares (--trace, --profile,
// --metrics, --no-profiler, --shadow, --canary, --tuning) and what the
// process does with them at start (configure the context and dispatcher)
// and at exit (write the trace, metrics and summary; save canary records).
// See docs/OBSERVABILITY.md.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "tessera/observers.h"
#include "tessera/tessera.h"

namespace tessera::cli {

struct ObserveOptions {
  std::string trace;          // Chrome trace JSON written at exit
  bool profile = false;       // summary table on stderr at exit
  std::string metrics;        // Prometheus text written at exit
  bool no_profiler = false;   // record no spans (overhead measurements)
  std::string shadow;         // RATE[,...]; empty: $TESSERA_SHADOW, else off
  std::string shadow_repro;   // directory for mismatch replay files
  std::string canary;         // NAME; empty: $TESSERA_CANARY, else off
  std::string canary_record;  // FILE; empty: $TESSERA_CANARY_RECORD, else default
  std::string tuning;         // FILE or "none"; empty: $TESSERA_TUNING, else default
};

void add_observe_options(CLI::App& app, ObserveOptions* o);

// What configure_observability (and, for the tuned table, the Runtime)
// settled on, for finish_observability and the commands that report it.
struct ObserveState {
  std::string tuning_path;  // the table in use ("" when none)
  std::string tuning_note;  // without one: why, and what auto uses (shipped ranking or priority)
  std::string canary_record_path;
  std::shared_ptr<ShadowObserver> shadow;  // attached to the dispatcher, when on
  std::shared_ptr<CanaryObserver> canary;
};

Status configure_observability(const ObserveOptions& o, Context& ctx, Dispatcher& dispatcher,
                               ObserveState* state);
// Runs at exit even when the command failed, so a trace of the failure is kept.
Status finish_observability(const ObserveOptions& o, const ObserveState& state, Context& ctx,
                            const Dispatcher& dispatcher);

// The canary record path this process uses (flag, env, default).
std::string canary_record_path(const ObserveOptions& o);

}  // namespace tessera::cli
