// tessera bench attention --shapes "SHAPE;SHAPE" --backends a,b [--json FILE]
//                         [--plot FILE.png] [--peaks fma=G,triad=G[,bf16=G]]
// Times each (shape, backend) through the dispatcher with policy only:<name>,
// so the measured path is the one users get. Medians, not means: the
// machines are shared and noisy. With the machine's peaks (--peaks, or
// measured for --plot) each row also gets its roof and "% of roof", and
// --plot draws the roofline (bench_roofline.h, roofline_plot.h).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "attention/staging/staging.h"
#include "attention/tuning/timing.h"
#include "bench_roofline.h"
#include "commands.h"
#include "roofline_plot.h"
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
  std::string plot_file;
  std::string peaks;  // --peaks text; empty: measured when --plot needs them
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
  bool bf16 = false;
  double median_ms = 0, min_ms = 0, gflops = 0, gbps = 0;
  double intensity = 0;  // FLOP per ideal byte (attention_flops / attention_bytes)
  size_t workspace_bytes = 0;
  int iters = 0;
};

Row bench_one(AppState& state, const verify::AttentionCase& spec, Backend* backend,
              const BenchOptions& o) {
  Row row;
  row.backend = std::string(backend->name());
  row.shape = spec.text;
  row.bf16 = spec.dtype == DType::kBF16;
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
  row.intensity = attention_flops(args) / attention_bytes(args);
  row.workspace_bytes = backend->workspace_bytes(valid, ctx);
  row.status = "ok";
  return row;
}

// The backends to time: --backends; else the global policy's (--attention or
// TESSERA_ATTENTION: an only: list in its order, without its deny: list);
// else every available backend.
Status backends_to_time(AppState& state, const BenchOptions& o, std::vector<Backend*>* out) {
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

// A row's share of its roof, in percent; 0 when it did not run.
double pct_of_roof(const Row& r, const MachinePeaks& peaks) {
  if (r.status != "ok" || r.intensity <= 0) return 0;
  return 100 * r.gflops / row_roof_gflops(peaks, r.intensity, r.bf16);
}

void print_header(bool roof) {
  std::printf("%-14s %10s %10s %9s %9s %s%12s  %s\n", "BACKEND", "MEDIAN_MS", "MIN_MS", "GFLOP/S",
              "GB/S", roof ? "%ROOF " : "", "WORKSPACE", "SHAPE");
}

void print_row(const Row& r, const std::optional<KnownPeaks>& peaks) {
  if (r.status != "ok") {
    std::printf("%-14s %s  %s\n", r.backend.c_str(), r.status.c_str(), r.shape.c_str());
    return;
  }
  char roof[16] = "";
  if (peaks) std::snprintf(roof, sizeof(roof), "%5.0f ", pct_of_roof(r, peaks->peaks));
  std::printf("%-14s %10.3f %10.3f %9.1f %9.1f %s%12zu  %s\n", r.backend.c_str(), r.median_ms,
              r.min_ms, r.gflops, r.gbps, roof, r.workspace_bytes, r.shape.c_str());
}

nlohmann::json row_json(const Row& r, int threads, const std::optional<KnownPeaks>& peaks) {
  nlohmann::json j = {{"backend", r.backend},
                      {"shape", r.shape},
                      {"status", r.status},
                      {"median_ms", r.median_ms},
                      {"min_ms", r.min_ms},
                      {"gflops", r.gflops},
                      {"gbps", r.gbps},
                      {"intensity", r.intensity},
                      {"workspace_bytes", r.workspace_bytes},
                      {"iters", r.iters},
                      {"threads", threads}};
  // Every row carries the peaks, so the file stays an array of rows for the
  // scripts that read it (bench/attention_table.py).
  if (peaks) {
    const bool ran = r.status == "ok" && r.intensity > 0;
    j["peaks"] = peaks_json(*peaks);
    j["roof_gflops"] =
        ran ? nlohmann::json(row_roof_gflops(peaks->peaks, r.intensity, r.bf16)) : nlohmann::json();
    j["pct_of_roof"] = ran ? nlohmann::json(pct_of_roof(r, peaks->peaks)) : nlohmann::json();
  }
  return j;
}

Status write_plot(const std::string& path, const std::vector<verify::AttentionCase>& shapes,
                  const std::vector<Row>& rows, const KnownPeaks& peaks, int threads) {
  RooflineChart chart;
  chart.title = roofline_title(threads);
  chart.peaks_note = "peaks " + peaks.source + "; medians of `tessera bench attention`";
  chart.peaks = peaks.peaks;
  chart.no_bf16_note = peaks.measured ? "no bf16 ceiling: this CPU has no AVX512_BF16"
                                      : "no bf16 ceiling given (--peaks ...,bf16=GFLOPS)";
  for (const verify::AttentionCase& spec : shapes) chart.shapes.push_back(spec.text);
  for (const Row& r : rows) {
    if (r.status != "ok") continue;
    const auto at = std::find_if(shapes.begin(), shapes.end(),
                                 [&](const verify::AttentionCase& c) { return c.text == r.shape; });
    chart.points.push_back(
        {r.backend, static_cast<int>(at - shapes.begin()) + 1, r.intensity, r.gflops});
  }
  if (Status s = write_roofline_png(chart, path); !s.ok()) return s;
  std::fprintf(stderr, "tessera: roofline written to %s\n", path.c_str());
  return Status::Ok();
}

int run_bench(AppState& state, const BenchOptions& o) {
  std::vector<verify::AttentionCase> shapes;
  if (Status s = verify::parse_case_list(o.shapes, &shapes); !s.ok()) return fail(s);
  std::vector<Backend*> backends;
  if (Status s = backends_to_time(state, o, &backends); !s.ok()) return fail(s);
  // Bad --plot / --peaks fail before anything is measured.
  if (!o.plot_file.empty()) {
    if (Status s = check_plot_path(o.plot_file); !s.ok()) return fail(s);
  }
  const int threads = state.context().pool().num_threads();
  std::optional<KnownPeaks> peaks;
  if (Status s = resolve_peaks(o.peaks, !o.plot_file.empty(), threads, &peaks); !s.ok()) {
    return fail(s);
  }
  print_header(peaks.has_value());
  std::vector<Row> rows;
  nlohmann::json json_rows = nlohmann::json::array();
  bool any_error = false;
  for (const verify::AttentionCase& spec : shapes) {
    for (Backend* b : backends) {
      rows.push_back(bench_one(state, spec, b, o));
      const Row& r = rows.back();
      print_row(r, peaks);
      if (r.status != "ok" && r.status.rfind("skipped", 0) != 0) any_error = true;
      std::fflush(stdout);
      json_rows.push_back(row_json(r, threads, peaks));
    }
  }
  if (!o.json_file.empty()) {
    std::ofstream f(o.json_file);
    if (!f) return fail(not_found("--json: cannot write '" + o.json_file + "'"));
    f << json_rows.dump(2) << "\n";
  }
  if (!o.plot_file.empty()) {
    if (Status s = write_plot(o.plot_file, shapes, rows, *peaks, threads); !s.ok()) return fail(s);
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
  attn->add_option("--json", o.json_file,
                   "Also write the rows as JSON to FILE (with the peaks, each row's roof and\n"
                   "pct_of_roof when peaks are known)");
  attn->add_option("--plot", o.plot_file,
                   "Also draw a roofline to FILE.png: log-log, x = FLOP per ideal byte, y =\n"
                   "GFLOP/s; the roof min(peak, triad * x) for the f32 FMA peak and the bf16\n"
                   "dot product's peak where the CPU has one; a marker per backend and shape.\n"
                   "Measures the peaks first (a few seconds) unless --peaks gives them");
  attn->add_option("--peaks", o.peaks,
                   "This machine's peaks, fma=GFLOPS,triad=GBS[,bf16=GFLOPS] (from\n"
                   "bench/peak/peak_probe or an earlier --plot run): no measuring; adds a\n"
                   "\"% of roof\" column to the table");
  attn->callback([&state] {
    if (Status s = state.init(); !s.ok()) {
      exit_code = fail(s);
      return;
    }
    exit_code = run_bench(state, o);
  });
}

}  // namespace tessera::cli
