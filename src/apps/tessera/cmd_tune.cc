// tessera tune [--output FILE] [--shapes "S;S"] [--backends a,b]
// Measures every available backend over a grid of shape buckets on this
// machine and writes the decision table `auto` reads (attention/tuning.h).
// Each (shape, backend) runs through a Dispatcher with policy only:<name>, so
// the measured path is the one users get.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>

#include "attention/tuner.h"
#include "attention/tuning.h"
#include "commands.h"
#include "verify/case_text.h"
#include "verify/grid.h"
#include "verify/plain_case.h"

namespace tessera::cli {

namespace {

struct TuneOptions {
  std::string output;
  std::string shapes;  // empty: the default grid
  std::string backends;
  int iters = 3;
  double min_seconds = 0.1;
};

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int run_tune(AppState& state, const TuneOptions& o) {
  std::vector<verify::AttentionCase> shapes;
  if (Status s = verify::parse_case_list(o.shapes.empty() ? verify::tune_shapes() : o.shapes,
                                         &shapes);
      !s.ok()) {
    return fail(s);
  }
  std::vector<Backend*> backends;
  for (Backend* b : state.registry().backends()) {
    if (!b->availability().available) continue;
    if (!o.backends.empty() && ("," + o.backends + ",").find("," + std::string(b->name()) + ",") ==
                                   std::string::npos) {
      continue;
    }
    backends.push_back(b);
  }
  const std::string output = o.output.empty() ? default_tuning_path() : o.output;
  if (output.empty()) return fail(invalid_argument("--output: no default path (HOME is unset)"));

  TunerOptions options;
  options.iters = o.iters;
  options.min_seconds = o.min_seconds;
  Tuner tuner(state.registry(), backends, options);
  Context& ctx = state.context();
  for (size_t i = 0; i < shapes.size(); ++i) {
    verify::PlainCase problem;
    if (Status s = verify::PlainCase::create(shapes[i], ctx.allocator(), &problem); !s.ok()) {
      return fail(s);
    }
    std::optional<AttentionProblem> valid;
    if (Status s = AttentionProblem::make(problem.args(), &valid); !s.ok()) return fail(s);
    std::fprintf(stderr, "tune [%zu/%zu] %s (%s)\n", i + 1, shapes.size(), shapes[i].text.c_str(),
                 tuning_bucket(problem.args()).c_str());
    tuner.measure(*valid, shapes[i].text, ctx, [](const Tuner::Measurement& m) {
      const std::string name(m.backend);
      if (m.status.ok()) {
        std::fprintf(stderr, "  %-18s %10.3f ms\n", name.c_str(), m.median_ms);
      } else {
        std::fprintf(stderr, "  %-18s failed: %s\n", name.c_str(), m.status.to_string().c_str());
      }
    });
  }
  TuningTable table;
  table.key = current_tuning_key();
  table.threads = ctx.pool().num_threads();
  table.created = utc_now();
  table.command = "tessera tune" + (o.shapes.empty() ? std::string() : " --shapes '" + o.shapes + "'");
  table.entries = tuner.entries();
  std::printf("%-44s %-18s %s\n", "BUCKET", "FASTEST", "RANKING (median ms)");
  for (const TuningEntry& entry : table.entries) {
    std::string ranking;
    for (const auto& m : entry.ranking) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%s %.3f", ranking.empty() ? "" : ", ", m.backend.c_str(),
                    m.median_ms);
      ranking += buf;
    }
    std::printf("%-44s %-18s %s\n", entry.bucket.c_str(), entry.ranking.front().backend.c_str(),
                ranking.c_str());
  }
  if (Status s = table.save(output); !s.ok()) return fail(s);
  std::printf("wrote %zu entries to %s (key: %s)\n", table.entries.size(), output.c_str(),
              table.key.describe().c_str());
  return 0;
}

}  // namespace

void add_tune_command(CLI::App& app, AppState& state) {
  auto* cmd = app.add_subcommand(
      "tune",
      "Measure every available backend over a grid of shape buckets on this machine and write\n"
      "the decision table that `auto` uses (default path: $XDG_CACHE_HOME/tessera/tuning.json,\n"
      "i.e. ~/.cache/tessera/tuning.json). See docs/OBSERVABILITY.md.");
  static TuneOptions o;
  cmd->add_option("--output,-o", o.output, "Where to write the table (default path above)");
  cmd->add_option("--shapes", o.shapes,
                  "Shapes joined by ';' instead of the default grid (each is measured and filed "
                  "under its bucket)");
  cmd->add_option("--backends", o.backends, "Comma-separated backends (default: all available)");
  cmd->add_option("--iters", o.iters, "Timed runs per shape and backend (at least)")
      ->capture_default_str();
  cmd->add_option("--min-seconds", o.min_seconds, "Keep timing until this long")
      ->capture_default_str();
  cmd->callback([&state] {
    if (Status s = state.init(); !s.ok()) {
      exit_code = fail(s);
      return;
    }
    exit_code = run_tune(state, o);
  });
}

}  // namespace tessera::cli
