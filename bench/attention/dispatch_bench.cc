// Per-dispatch overhead (Google Benchmark): the same cpu.flash call made
// directly on the backend and through Dispatcher::run, profiler off and on,
// on a tiny shape (where the dispatcher's own cost shows) and on S1 (where
// it should vanish). The policy is auto, which serves cpu.flash on a CPU
// build; the profiler keeps its default span ring. Overhead = Dispatch - Direct, as a ratio side by side.
//   build/release/bench/attention/dispatch_bench --benchmark_repetitions=9
//       --benchmark_report_aggregates_only=true
// TESSERA_BENCH_THREADS overrides the thread count (default 2).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tessera/dispatcher.h"

namespace tessera {
namespace {

struct Shape {
  const char* name;
  int64_t b, s, h, d;
};
constexpr Shape kShapes[] = {{"tiny", 1, 16, 1, 32}, {"S1", 8, 512, 12, 64}};

int bench_threads() {
  const char* env = std::getenv("TESSERA_BENCH_THREADS");
  return env != nullptr ? std::atoi(env) : 2;
}

struct Tensors {
  std::vector<float> q, k, v, out;
  AttentionArgs args;
  explicit Tensors(const Shape& s) {
    const size_t n = static_cast<size_t>(s.b * s.s * s.h * s.d);
    q.resize(n), k.resize(n), v.resize(n), out.resize(n);
    std::mt19937 rng(1);
    std::normal_distribution<float> dist;
    for (auto* buf : {&q, &k, &v}) {
      for (float& x : *buf) x = dist(rng);
    }
    args.q = TensorView::contiguous(q.data(), DType::kF32, {s.b, s.s, s.h, s.d});
    args.k = TensorView::contiguous(k.data(), DType::kF32, {s.b, s.s, s.h, s.d});
    args.v = TensorView::contiguous(v.data(), DType::kF32, {s.b, s.s, s.h, s.d});
    args.out = TensorView::contiguous(out.data(), DType::kF32, {s.b, s.s, s.h, s.d});
  }
};

enum class Path { kDirect, kDispatch, kDispatchProfiled };

void BM_Attention(benchmark::State& state, const Shape& shape, Path path) {
  Tensors t(shape);
  ContextOptions options;
  options.num_threads = bench_threads();
  options.profile = path == Path::kDispatchProfiled;
  Context ctx(options);
  Registry registry;
  register_builtin_backends(registry);
  Dispatcher dispatcher(registry);  // auto: cpu.flash, after checking every backend
  Backend* backend = registry.find("cpu.flash");
  std::optional<AttentionProblem> problem;
  if (Status s = AttentionProblem::make(t.args, &problem); !s.ok()) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark idiom
    // Direct: the kernel alone on a problem validated once. Dispatch: what a
    // caller with plain args pays (validation, selection, stats, span).
    const Status status =
        path == Path::kDirect ? backend->run(*problem, ctx) : dispatcher.run(t.args, ctx);
    if (!status.ok()) {
      state.SkipWithError(status.message().c_str());
      break;
    }
  }
}

void register_all() {
  const struct {
    const char* name;
    Path path;
  } paths[] = {{"direct", Path::kDirect},
               {"dispatch", Path::kDispatch},
               {"dispatch_profiled", Path::kDispatchProfiled}};
  for (const Shape& s : kShapes) {
    for (const auto& p : paths) {
      const std::string name = std::string(s.name) + "/" + p.name;
      auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_Attention, s, p.path);
      b->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(std::string(s.name) == "S1" ? 2.0 : 0.5);
    }
  }
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  tessera::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
