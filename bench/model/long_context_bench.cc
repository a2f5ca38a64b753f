// Long-context forward passes (issue 31 item 7): model::Encoder::embed on
// random token ids, one benchmark per sequence length, with the profiler's
// per-stage and per-layer attention times and the tracked allocator's peak.
//   build/release/bench/model/long_context_bench --model DIR [--lengths 512,2048,8192]
//       [--batch 512:4] [--weights f32|bf16] [--iters N] [--warmup N] [--threads N]
//       [--json OUT.json] [benchmark flags]
// --model: a folder Encoder::load reads (bench/long_context/make_models.py
// writes the random-weight ones; data/models/tiny-modernbert works too).
// --batch S:B runs B sequences of length S per call (default 1 for every S).
// Each length runs --warmup untimed calls, then --iters timed calls (Google
// Benchmark's Iterations; default 3). Stage times (profiler spans; the
// dispatcher's attention spans are "attention") are summed over the timed
// calls and divided by their count. Attention per layer: each attention span
// belongs to the layer of the stage span before it; a layer is "global" when
// its mask has no window. Peak tracked bytes: the allocator's peak during one
// call minus the bytes live before it (the weights), i.e. the working memory.
// --json writes all of it (with the load time and VmRSS/VmHWM after load) for
// bench/long_context/run_bench.py.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "model/encoder.h"
#include "tessera/registry.h"

namespace tessera::model {
namespace {

struct Options {
  std::string model;
  std::vector<int> lengths = {512, 2048, 8192};
  std::map<int, int> batch;  // S -> sequences per call
  WeightPrecision weights = WeightPrecision::kF32;
  int iters = 3, warmup = 1, threads = 0;
  std::string json;
};

struct LengthResult {
  int s = 0, batch = 1;
  std::vector<double> call_ms;
  std::map<std::string, double> stage_ms;          // per call
  std::map<int, double> layer_attention_ms;        // per call
  std::map<int, std::string> layer_mask;           // layer -> mask text
  size_t peak_working_bytes = 0;
  std::map<std::string, size_t> owner_peaks;       // owner -> peak during the call (bytes)
};

struct Shared {
  std::unique_ptr<Context> ctx;
  Registry registry;
  std::unique_ptr<Encoder> encoder;
  double load_ms = 0;
  long rss_kb_after_load = 0, hwm_kb_after_load = 0;
  std::vector<LengthResult> results;
};

long proc_status_kb(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key, 0) == 0) return std::atol(line.c_str() + std::strlen(key));
  }
  return -1;
}

std::vector<std::vector<int32_t>> make_batch(const Encoder& enc, int s, int count, unsigned seed) {
  std::mt19937 rng(seed);
  const int32_t hi = std::min<int32_t>(enc.config().network.vocab_size,
                                       static_cast<int32_t>(enc.tokenizer().vocab_size())) - 1;
  std::uniform_int_distribution<int32_t> id(0, hi);
  std::vector<std::vector<int32_t>> seqs(count, std::vector<int32_t>(s));
  for (auto& seq : seqs) {
    for (auto& t : seq) t = id(rng);
  }
  return seqs;
}

int layer_of(const std::string& name) {  // "model.layer12.qkv_gemm" -> 12; else -1
  const std::string prefix = "model.layer";
  if (name.rfind(prefix, 0) != 0) return -1;
  return std::atoi(name.c_str() + prefix.size());
}

std::string stage_of(const Span& span) {
  if (!span.backend.empty()) return "attention";
  const auto dot = span.name.rfind('.');
  return dot == std::string::npos ? span.name : span.name.substr(dot + 1);
}

void BM_Forward(benchmark::State& state, Shared* sh, int s, int count, int warmup) {
  Context& ctx = *sh->ctx;
  Encoder& enc = *sh->encoder;
  Dispatcher dispatcher(sh->registry, Policy{});
  const auto seqs = make_batch(enc, s, count, 31u + static_cast<unsigned>(s));
  std::vector<float> out(static_cast<size_t>(count) * enc.dim());
  LengthResult r;
  r.s = s;
  r.batch = count;
  for (int i = 0; i < warmup; ++i) (void)enc.embed(seqs, dispatcher, ctx, out.data());
  ctx.profiler().clear();
  const size_t live_before = ctx.allocator().live_bytes();
  ctx.allocator().reset_peak();
  std::map<std::string, size_t> live_owner;
  for (const auto& [name, st] : ctx.allocator().by_owner()) live_owner[name] = st.live_bytes;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark idiom
    const auto t0 = std::chrono::steady_clock::now();
    const Status st = enc.embed(seqs, dispatcher, ctx, out.data());
    const auto t1 = std::chrono::steady_clock::now();
    if (!st.ok()) {
      state.SkipWithError(st.to_string().c_str());
      return;
    }
    r.call_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    benchmark::DoNotOptimize(out.data());
  }
  r.peak_working_bytes = ctx.allocator().peak_bytes() - live_before;
  for (const auto& [name, st] : ctx.allocator().by_owner()) {
    r.owner_peaks[name] = st.peak_bytes - std::min(st.peak_bytes, live_owner[name]);
  }
  const double calls = static_cast<double>(r.call_ms.size());
  int layer = -1;
  for (const Span& span : ctx.profiler().spans()) {
    const double ms = span.duration_ns * 1e-6 / calls;
    r.stage_ms[stage_of(span)] += ms;
    if (span.backend.empty()) {
      layer = layer_of(span.name);
    } else if (layer >= 0) {
      r.layer_attention_ms[layer] += ms;
      r.layer_mask[layer] = span.mask;
    }
  }
  if (ctx.profiler().dropped_spans() > 0) state.SkipWithError("profiler ring overflowed");
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(s) * count);  // tokens/s
  std::vector<double> sorted = r.call_ms;
  std::sort(sorted.begin(), sorted.end());
  state.counters["median_ms"] = sorted[sorted.size() / 2];
  state.counters["peak_MiB"] = static_cast<double>(r.peak_working_bytes) / (1 << 20);
  sh->results.push_back(std::move(r));
}

bool is_global(const std::string& mask) { return mask.find("window") == std::string::npos; }

void print_report(const Shared& sh) {
  for (const LengthResult& r : sh.results) {
    std::fprintf(stderr, "S=%d x%d: stage ms per call:\n", r.s, r.batch);
    double total = 0;
    for (const auto& [name, ms] : r.stage_ms) total += ms;
    for (const auto& [name, ms] : r.stage_ms) {
      std::fprintf(stderr, "  %-16s %10.2f  %5.1f%%\n", name.c_str(), ms, 100.0 * ms / total);
    }
    double g = 0, l = 0;
    int ng = 0, nl = 0;
    for (const auto& [layer, ms] : r.layer_attention_ms) {
      if (is_global(r.layer_mask.at(layer))) {
        g += ms;
        ++ng;
      } else {
        l += ms;
        ++nl;
      }
    }
    if (ng > 0) std::fprintf(stderr, "  attention per global layer %.3f ms (%d layers)\n", g / ng, ng);
    if (nl > 0) std::fprintf(stderr, "  attention per local layer  %.3f ms (%d layers)\n", l / nl, nl);
    std::fprintf(stderr, "  peak working memory %.1f MiB\n",
                 static_cast<double>(r.peak_working_bytes) / (1 << 20));
  }
}

void write_json(const Shared& sh, const Options& o) {
  nlohmann::json j;
  j["model"] = o.model;
  j["weights"] = o.weights == WeightPrecision::kBf16 ? "bf16" : "f32";
  j["threads"] = sh.ctx->pool().num_threads();
  j["load_ms"] = sh.load_ms;
  j["rss_kb_after_load"] = sh.rss_kb_after_load;
  j["hwm_kb_after_load"] = sh.hwm_kb_after_load;
  j["weight_bytes"] = sh.encoder->weight_bytes();
  j["hwm_kb_end"] = proc_status_kb("VmHWM:");
  for (const LengthResult& r : sh.results) {
    nlohmann::json x;
    x["s"] = r.s;
    x["batch"] = r.batch;
    x["call_ms"] = r.call_ms;
    x["stage_ms"] = r.stage_ms;
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& [layer, ms] : r.layer_attention_ms) {
      layers.push_back({{"layer", layer}, {"ms", ms}, {"mask", r.layer_mask.at(layer)}});
    }
    x["layer_attention"] = layers;
    x["peak_working_bytes"] = r.peak_working_bytes;
    x["owner_peak_bytes"] = r.owner_peaks;
    j["lengths"].push_back(x);
  }
  std::ofstream(o.json) << j.dump(1) << "\n";
}

std::vector<int> parse_ints(const std::string& s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) v.push_back(std::atoi(item.c_str()));
  return v;
}

// Takes this bench's flags out of argv; Google Benchmark reads the rest.
Options parse(int* argc, char** argv) {
  Options o;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag, std::string* out) {
      if (a != flag || i + 1 >= *argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (value("--model", &o.model)) {
    } else if (value("--lengths", &v)) {
      o.lengths = parse_ints(v);
    } else if (value("--batch", &v)) {
      const auto colon = v.find(':');
      o.batch[std::atoi(v.substr(0, colon).c_str())] = std::atoi(v.substr(colon + 1).c_str());
    } else if (value("--weights", &v)) {
      o.weights = v == "bf16" ? WeightPrecision::kBf16 : WeightPrecision::kF32;
    } else if (value("--iters", &v)) {
      o.iters = std::atoi(v.c_str());
    } else if (value("--warmup", &v)) {
      o.warmup = std::atoi(v.c_str());
    } else if (value("--threads", &v)) {
      o.threads = std::atoi(v.c_str());
    } else if (value("--json", &o.json)) {
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  return o;
}

}  // namespace
}  // namespace tessera::model

int main(int argc, char** argv) {
  using namespace tessera;
  using namespace tessera::model;
  const Options o = parse(&argc, argv);
  benchmark::Initialize(&argc, argv);
  if (o.model.empty()) {
    std::fprintf(stderr, "--model DIR is required\n");
    return 2;
  }
  Shared sh;
  ContextOptions co;
  co.num_threads = o.threads;
  co.reuse_memory_bytes = size_t{192} << 20;  // as tessera::Runtime's default
  sh.ctx = std::make_unique<Context>(co);
  register_builtin_backends(sh.registry);
  EncoderOptions eo;
  eo.weights = o.weights;
  const auto t0 = std::chrono::steady_clock::now();
  const Status st = Encoder::load(o.model, eo, *sh.ctx, &sh.encoder);
  const auto t1 = std::chrono::steady_clock::now();
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.to_string().c_str());
    return 1;
  }
  sh.load_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  sh.rss_kb_after_load = proc_status_kb("VmRSS:");
  sh.hwm_kb_after_load = proc_status_kb("VmHWM:");
  std::fprintf(stderr, "loaded %s in %.0f ms, RSS %.0f MiB, %d threads\n", o.model.c_str(),
               sh.load_ms, sh.rss_kb_after_load / 1024.0, static_cast<int>(sh.ctx->pool().num_threads()));
  for (int s : o.lengths) {
    const int count = o.batch.count(s) ? o.batch.at(s) : 1;
    benchmark::RegisterBenchmark(
        ("forward/S=" + std::to_string(s) + "x" + std::to_string(count)).c_str(),
        [&sh, s, count, w = o.warmup](benchmark::State& state) {
          BM_Forward(state, &sh, s, count, w);
        })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(o.iters);
  }
  benchmark::RunSpecifiedBenchmarks();
  print_report(sh);
  if (!o.json.empty()) write_json(sh, o);
  benchmark::Shutdown();
  return 0;
}
