// cpu.flash micro-benchmarks (Google Benchmark): the shapes S1..S5
// (and issue 37's per-call shape P1) in f32 and bf16 on a 2-thread Context, with GFLOP/s (visible
// pairs only, as attention_flops counts them) and GB/s (attention_bytes). Run:
//   build/<dir>/src/backends/cpu_flash/bench/cpu_flash_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
// TESSERA_BENCH_THREADS overrides the thread count. TESSERA_BENCH_CLOCK=cpu
// rates by process CPU time instead of wall time: on a shared, overloaded
// machine that still shows the kernel's own speed (use it for tuning, never
// for the published table).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cpu_flash/cpu_flash_backend.h"

namespace tessera {
namespace {

struct Shape {
  const char* name;
  int64_t b, hq, hkv, sq, sk, d;
  bool causal;
  // Memory laid out [B, H, S, D] (a torch tensor's layout, viewed as BSHD
  // with strides), as the Python per-call bench hands it over.
  bool bhsd = false;
};

constexpr Shape kShapes[] = {
    {"S1_encoder", 8, 12, 12, 512, 512, 64, false},
    {"S2_long_document", 1, 16, 16, 4096, 4096, 64, false},
    {"S3_prefill_causal", 1, 32, 32, 4096, 4096, 128, true},
    {"S4_gqa_decode", 1, 32, 8, 1, 8192, 128, false},
    {"S5_minilm", 32, 12, 12, 256, 256, 32, false},
    // Issue 37's per-call shape (bench/peers/per_call.py): the kernel's fixed
    // cost per call and per head, without Python. Timed in microseconds.
    {"P1_per_call", 1, 8, 8, 16, 16, 64, true, true},
};

int bench_threads() {
  const char* env = std::getenv("TESSERA_BENCH_THREADS");
  return env != nullptr ? std::atoi(env) : 2;
}

// A BSHD view of [b, s, h, d] memory, or of [b, h, s, d] memory (bhsd).
TensorView view(void* data, DType dtype, int64_t b, int64_t s, int64_t h, int64_t d, bool bhsd) {
  if (!bhsd) return TensorView::contiguous(data, dtype, {b, s, h, d});
  TensorView t = TensorView::contiguous(data, dtype, {b, h, s, d});
  std::swap(t.shape[1], t.shape[2]);
  std::swap(t.strides[1], t.strides[2]);
  return t;
}

// Random BSHD tensors of one shape, in `dtype`.
struct Tensors {
  std::vector<uint8_t> q, k, v, out;
  AttentionArgs args;
  Tensors(const Shape& s, DType dtype) {
    const size_t e = dtype_size(dtype);
    q.resize(s.b * s.sq * s.hq * s.d * e);
    k.resize(s.b * s.sk * s.hkv * s.d * e);
    v.resize(k.size());
    out.resize(q.size());
    std::mt19937 rng(1);
    std::normal_distribution<float> n;
    for (auto* buf : {&q, &k, &v}) {
      for (size_t i = 0; i < buf->size() / e; ++i) store_from_f32(buf->data(), i, dtype, n(rng));
    }
    args.q = view(q.data(), dtype, s.b, s.sq, s.hq, s.d, s.bhsd);
    args.k = view(k.data(), dtype, s.b, s.sk, s.hkv, s.d, s.bhsd);
    args.v = view(v.data(), dtype, s.b, s.sk, s.hkv, s.d, s.bhsd);
    args.out = view(out.data(), dtype, s.b, s.sq, s.hq, s.d, s.bhsd);
    if (s.causal) args.mask = Mask::causal();
  }
};

void BM_CpuFlash(benchmark::State& state, const Shape& shape, DType dtype) {
  Tensors t(shape, dtype);
  Context ctx(ContextOptions{bench_threads()});
  auto backend = make_cpu_flash_backend();
  std::optional<AttentionProblem> problem;
  if (Status s = AttentionProblem::make(t.args, &problem); !s.ok()) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark idiom
    const Status status = backend->run(*problem, ctx);
    if (!status.ok()) {
      state.SkipWithError(status.message().c_str());
      break;
    }
  }
  state.counters["GFLOP/s"] = benchmark::Counter(attention_flops(t.args) / 1e9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GB/s"] = benchmark::Counter(attention_bytes(t.args) / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  const char* clock = std::getenv("TESSERA_BENCH_CLOCK");
  const bool cpu_clock = clock != nullptr && std::string(clock) == "cpu";
  for (const Shape& s : kShapes) {
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      const std::string name = std::string(s.name) + "/" + std::string(dtype_name(dtype));
      auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_CpuFlash, s, dtype);
      b->Unit(s.bhsd ? benchmark::kMicrosecond : benchmark::kMillisecond)->MinTime(0.5);
      if (cpu_clock) {
        b->MeasureProcessCPUTime();
      } else {
        b->UseRealTime();
      }
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
