// tessera tune [--output FILE | --shipped-defaults FILE] [--shapes "S;S"|decode]
//              [--backends a,b]
// Measures every available backend over a grid of shape buckets on this
// machine and writes the decision table `auto` reads (attention/tuning/tuning.h),
// or, with --shipped-defaults, the default ranking shipped for this CPU kind
// (attention/tuning/shipped_rankings.h). Each (shape, backend) runs through a
// Dispatcher with policy only:<name>, so the measured path is the one users
// get.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <sstream>

#include "api/environment.h"
#include "attention/tuning/tuner.h"
#include "attention/tuning/tuning.h"
#include "commands.h"
#include "runtime/cpu_kind.h"
#include "verify/case_text.h"
#include "verify/grid.h"
#include "verify/plain_case.h"

namespace tessera::cli {

namespace {

struct TuneOptions {
  std::string output;
  std::string shipped_defaults;  // FILE: write this CPU kind's shipped ranking there
  std::string shapes;            // empty: the default grid ("decode" with --shipped-defaults)
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

// A shipped ranking is for a CPU kind and for `auto`, so it times what auto
// serves from on a CPU: stable CPU backends, less the reference (priority 0:
// the exact last resort, seconds per decode shape, never the fastest).
bool shipped_candidate(const Backend& b) {
  return b.device().kind == DeviceKind::kCpu && b.capabilities().maturity == Maturity::kStable &&
         b.priority() > 0;
}

// Backends to time: the available ones named by --backends (all when
// empty; with --shipped-defaults, the shipped candidates).
std::vector<Backend*> tune_backends(const Registry& registry, const TuneOptions& o) {
  std::vector<Backend*> backends;
  for (Backend* b : registry.backends()) {
    if (!b->availability().available) continue;
    if (!o.shipped_defaults.empty() && o.backends.empty() && !shipped_candidate(*b)) continue;
    if (!o.backends.empty() &&
        ("," + o.backends + ",").find("," + std::string(b->name()) + ",") == std::string::npos) {
      continue;
    }
    backends.push_back(b);
  }
  return backends;
}

// The command that writes this table again, for its provenance.
std::string tune_command(const TuneOptions& o, int threads) {
  if (o.shipped_defaults.empty()) {
    return "tessera tune" + (o.shapes.empty() ? std::string() : " --shapes '" + o.shapes + "'");
  }
  std::string c = "tessera --threads " + std::to_string(threads) + " tune --shipped-defaults " +
                  o.shipped_defaults;
  if (!o.shapes.empty() && o.shapes != "decode") c += " --shapes '" + o.shapes + "'";
  if (!o.backends.empty()) c += " --backends " + o.backends;
  const TuneOptions defaults;
  if (o.iters != defaults.iters) c += " --iters " + std::to_string(o.iters);
  if (o.min_seconds != defaults.min_seconds) c += " --min-seconds " + std::to_string(o.min_seconds);
  return c;
}

// A shipped file is named for the CPU kind it is measured on, so a run on
// another kind cannot overwrite it.
Status check_shipped_path(const std::string& path) {
  const std::string kind(cpu_kind_name(cpu_kind()));
  const std::string stem = std::filesystem::path(path).stem().string();
  if (stem == kind) return Status::Ok();
  return invalid_argument("--shipped-defaults " + path + ": this CPU is of kind " + kind +
                          ", so its shipped ranking is " + kind +
                          ".json (src/attention/tuning/default_rankings/" + kind + ".json)");
}

int run_tune(AppState& state, const TuneOptions& o) {
  const bool shipped = !o.shipped_defaults.empty();
  if (shipped && !o.output.empty()) {
    return fail(invalid_argument("give --output or --shipped-defaults, not both"));
  }
  if (shipped) {
    if (Status s = check_shipped_path(o.shipped_defaults); !s.ok()) return fail(s);
  }
  std::string shape_text = o.shapes;
  if (shape_text == "decode" || (shape_text.empty() && shipped)) {
    shape_text = verify::decode_tune_shapes();
  } else if (shape_text.empty()) {
    shape_text = verify::tune_shapes();
  }
  std::vector<verify::AttentionCase> shapes;
  if (Status s = verify::parse_case_list(shape_text, &shapes); !s.ok()) return fail(s);
  const std::vector<Backend*> backends = tune_backends(state.registry(), o);
  const std::string output =
      shipped ? o.shipped_defaults : (o.output.empty() ? api::default_tuning_path() : o.output);
  if (output.empty()) return fail(invalid_argument("--output: no default path (HOME is unset)"));

  const double load_at_start = load_average();
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
  table.command = tune_command(o, table.threads);
  table.machine_load = describe_load(load_at_start, load_average());
  if (shipped) table.cpu_kind = std::string(cpu_kind_name(cpu_kind()));
  // Every measured bucket, ranked, shipped ones included: the file is the
  // record of the measurement (docs/DECISIONS.md).
  table.entries = tuner.entries();
  // Experimental backends are timed and filed like the others, but auto
  // passes over them whatever their rank (the policy must allow them), so
  // they are starred: a fast xla in the table is not what auto serves.
  bool starred = false;
  const auto shown = [&](const std::string& name) {
    const Backend* b = state.registry().find(name);
    if (b == nullptr || b->capabilities().maturity != Maturity::kExperimental) return name;
    starred = true;
    return name + "*";
  };
  std::printf("%-44s %-18s %s\n", "BUCKET", "FASTEST", "RANKING (median ms)");
  for (const TuningEntry& entry : table.entries) {
    std::string ranking;
    for (const auto& m : entry.ranking) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%s %.3f", ranking.empty() ? "" : ", ",
                    shown(m.backend).c_str(), m.median_ms);
      ranking += buf;
    }
    std::printf("%-44s %-18s %s\n", entry.bucket.c_str(),
                shown(entry.ranking.front().backend).c_str(), ranking.c_str());
  }
  if (starred) {
    std::printf(
        "* experimental: auto serves it only under the policy clause allow:experimental "
        "or when named in only:/prefer: (see backends --explain)\n");
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
      "i.e. ~/.cache/tessera/tuning.json). With --shipped-defaults, write the default ranking\n"
      "shipped for this CPU kind instead (docs/BENCHMARKS.md). See docs/OBSERVABILITY.md.");
  static TuneOptions o;
  cmd->add_option("--output,-o", o.output, "Where to write the table (default path above)");
  cmd->add_option("--shipped-defaults", o.shipped_defaults,
                  "Measure the decode grid and write this CPU kind's shipped default ranking to "
                  "FILE (src/attention/tuning/default_rankings/<kind>.json; CPU backends only)");
  cmd->add_option("--shapes", o.shapes,
                  "Shapes joined by ';' instead of the default grid (each is measured and filed "
                  "under its bucket), or 'decode' for the decode grid");
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
