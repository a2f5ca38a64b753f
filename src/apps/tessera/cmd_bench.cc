// tessera bench attention --shapes "SHAPE;SHAPE" --backends a,b [--json FILE]
// Times each (shape, backend) through the dispatcher with policy only:<name>,
// so the measured path is the one users get. Medians, not means: the
// machines are shared and noisy.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "attention/staging.h"
#include "attention/timing.h"
#include "commands.h"
#include "verify/case_text.h"
#include "verify/grid.h"
#include "verify/plain_case.h"

namespace tessera::cli {

namespace {

struct BenchOptions {
  std::string shapes{verify::kBenchShapes};
  std::string backends;  // empty: every available backend
  int warmup = 1;
  int iters = 5;
  double min_seconds = 0.2;
  std::string json_file;
};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

struct Row {
  std::string backend, shape, status;
  double median_ms = 0, min_ms = 0, gflops = 0, gbps = 0;
  size_t workspace_bytes = 0;
  int iters = 0;
};

Row bench_one(AppState& state, const verify::AttentionCase& spec, Backend* backend,
              const BenchOptions& o) {
  Row row;
  row.backend = std::string(backend->name());
  row.shape = spec.text;
  Context& ctx = state.context();
  verify::PlainCase tensors;
  if (Status s = verify::PlainCase::create(spec, ctx.allocator(), &tensors); !s.ok()) {
    row.status = s.to_string();
    return row;
  }
  std::optional<AttentionProblem> host;
  if (Status s = AttentionProblem::make(tensors.args(), &host); !s.ok()) {
    row.status = s.to_string();
    return row;
  }
  // A backend on a device times tensors staged there (an unavailable one is
  // explained as a skip below).
  const bool place = backend->availability().available;
  BackendPlacement placed;
  if (place) {
    if (Status s = BackendPlacement::place(*backend, *host, "cli.bench", ctx, &placed); !s.ok()) {
      row.status = s.to_string();
      return row;
    }
  }
  const AttentionProblem& valid = place ? placed.problem() : *host;
  const AttentionArgs& args = valid.args();
  Policy only;
  only.only = {row.backend};
  Dispatcher dispatcher(state.registry(), only);
  const Explanation ex = dispatcher.explain(valid, ctx);
  if (ex.chosen.empty()) {
    row.status = "skipped: ";
    for (const auto& v : ex.verdicts) {
      for (const auto& r : v.reasons) row.status += r + "; ";
    }
    return row;
  }
  TimingOptions timing;
  timing.warmup = o.warmup;
  timing.iters = o.iters;
  timing.min_seconds = o.min_seconds;  // more runs until then, so fast shapes get a stable median
  Timing t;
  if (Status s = time_dispatch(dispatcher, valid, ctx, timing, &t); !s.ok()) {
    row.status = s.to_string();
    return row;
  }
  // Spans stay for --trace / --profile: the profiler's ring bounds them.
  row.iters = static_cast<int>(t.ms.size());
  row.median_ms = t.median_ms();
  row.min_ms = t.min_ms();
  row.gflops = attention_flops(args) / (row.median_ms * 1e6);
  row.gbps = attention_bytes(args) / (row.median_ms * 1e6);
  row.workspace_bytes = backend->workspace_bytes(valid, ctx);
  row.status = "ok";
  return row;
}

// The backends to time: --backends; else the global policy's (--attention or
// TESSERA_ATTENTION: an only: list in its order, without its deny: list);
// else every available backend.
Status backends_to_time(AppState& state, const BenchOptions& o,
                        std::vector<Backend*>* out) {
  const Policy& policy = state.policy();
  const bool from_flag = !o.backends.empty();
  const std::vector<std::string> named = from_flag ? split_commas(o.backends) : policy.only;
  for (const std::string& name : named) {
    Backend* b = state.registry().find(name);
    if (b == nullptr) {
      return not_found(std::string(from_flag ? "--backends" : "--attention") +
                       ": no backend named '" + name + "'");
    }
    out->push_back(b);
  }
  if (named.empty()) {
    for (Backend* b : state.registry().backends()) {
      if (b->availability().available) out->push_back(b);
    }
  }
  if (!from_flag) {
    std::erase_if(*out, [&](Backend* b) {
      return std::find(policy.deny.begin(), policy.deny.end(), b->name()) != policy.deny.end();
    });
  }
  return Status::Ok();
}

int run_bench(AppState& state, const BenchOptions& o) {
  std::vector<verify::AttentionCase> shapes;
  if (Status s = verify::parse_case_list(o.shapes, &shapes); !s.ok()) return fail(s);
  std::vector<Backend*> backends;
  if (Status s = backends_to_time(state, o, &backends); !s.ok()) return fail(s);
  std::printf("%-14s %10s %10s %9s %9s %12s  %s\n", "BACKEND", "MEDIAN_MS", "MIN_MS", "GFLOP/S",
              "GB/S", "WORKSPACE", "SHAPE");
  nlohmann::json rows = nlohmann::json::array();
  bool any_error = false;
  for (const verify::AttentionCase& spec : shapes) {
    for (Backend* b : backends) {
      const Row r = bench_one(state, spec, b, o);
      if (r.status == "ok") {
        std::printf("%-14s %10.3f %10.3f %9.1f %9.1f %12zu  %s\n", r.backend.c_str(), r.median_ms,
                    r.min_ms, r.gflops, r.gbps, r.workspace_bytes, r.shape.c_str());
      } else {
        std::printf("%-14s %s  %s\n", r.backend.c_str(), r.status.c_str(), r.shape.c_str());
        if (r.status.rfind("skipped", 0) != 0) any_error = true;
      }
      std::fflush(stdout);
      rows.push_back({{"backend", r.backend},
                      {"shape", r.shape},
                      {"status", r.status},
                      {"median_ms", r.median_ms},
                      {"min_ms", r.min_ms},
                      {"gflops", r.gflops},
                      {"gbps", r.gbps},
                      {"workspace_bytes", r.workspace_bytes},
                      {"iters", r.iters},
                      {"threads", state.context().pool().num_threads()}});
    }
  }
  if (!o.json_file.empty()) {
    std::ofstream f(o.json_file);
    if (!f) return fail(not_found("--json: cannot write '" + o.json_file + "'"));
    f << rows.dump(2) << "\n";
  }
  return any_error ? 1 : 0;
}

}  // namespace

void add_bench_command(CLI::App& app, AppState& state) {
  auto* bench = app.add_subcommand("bench", "Benchmarks (medians; see docs/BENCHMARKS.md)");
  bench->require_subcommand(1);
  auto* attn = bench->add_subcommand(
      "attention",
      "Time attention backends on shapes: median ms, GFLOP/s (4*B*Hq*Sq*Sk*D over visible\n"
      "pairs, so causal counts about half), GB/s of the ideal traffic, workspace bytes.");
  static BenchOptions o;
  attn->add_option("--shapes", o.shapes,
                   "Shapes joined by ';', each like \"B=8,S=512,H=12,D=64,dtype=f32,mask=none\"")
      ->capture_default_str();
  attn->add_option("--backends", o.backends,
                   "Comma-separated backends (default: the global --attention policy's only: "
                   "list without its deny: list, else every available backend)");
  attn->add_option("--warmup", o.warmup, "Untimed runs first")->capture_default_str();
  attn->add_option("--iters", o.iters, "Timed runs (at least)")->capture_default_str();
  attn->add_option("--min-seconds", o.min_seconds, "Keep timing until this long")
      ->capture_default_str();
  attn->add_option("--json", o.json_file, "Also write the rows as JSON to FILE");
  attn->callback([&state] {
    if (Status s = state.init(); !s.ok()) {
      exit_code = fail(s);
      return;
    }
    exit_code = run_bench(state, o);
  });
}

}  // namespace tessera::cli
