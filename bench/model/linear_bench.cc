// The encoder's four Linear products alone (all-MiniLM-L6-v2 shapes, one
// 8,192-token batch, 2 threads): plain sgemm (oneDNN's own threads) against
// linear() with packed f32, bf16 and int8 weights and the epilogue the
// encoder uses (bias; GELU on ffn_in; residual add on attn_out and ffn_out),
// split over our pool. GFLOP/s (int8: GOP/s) as items/s x 1e-9.
//   build/release/bench/model/linear_bench [--benchmark_min_time=1]
#include <benchmark/benchmark.h>

#include <vector>

#include "runtime/gemm.h"

namespace tessera {
namespace {

constexpr int64_t kTokens = 8192;

struct Shape {
  const char* name;
  int64_t n, k;  // W [n, k]
};
constexpr Shape kShapes[] = {
    {"qkv", 1152, 384}, {"attn_out", 384, 384}, {"ffn_in", 1536, 384}, {"ffn_out", 384, 1536}};

struct Operands {
  std::vector<float> x, w, y;
  explicit Operands(const Shape& s)
      : x(kTokens * s.k, 0.5f), w(s.n * s.k, 0.01f), y(kTokens * s.n) {}
};

void BM_F32(benchmark::State& state, Shape s) {
  Operands o(s);
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark idiom
    const Status st = sgemm(false, true, kTokens, s.n, s.k, 1.0f, o.x.data(), s.k, o.w.data(), s.k,
                            0.0f, o.y.data(), s.n);
    if (!st.ok()) return state.SkipWithError(st.to_string().c_str());
  }
  state.SetItemsProcessed(state.iterations() * 2 * kTokens * s.n * s.k);
}

constexpr int kThreads = 2;

void BM_Packed(benchmark::State& state, Shape s, WeightType type, LinearEpilogue e) {
  Operands o(s);
  std::vector<float> bias(s.n, 0.01f);
  if (e.bias) e.bias = bias.data();
  TrackingAllocator alloc;
  ThreadPool pool(kThreads);
  PackedWeights w;
  size_t bytes = 0;
  Buffer work;
  Status st = PackedWeights::create(o.w.data(), s.n, s.k, type, alloc, "bench.weights", &w);
  if (st.ok()) st = linear_workspace_bytes(kThreads, kTokens, w, e, &bytes);
  if (st.ok()) st = Buffer::allocate(alloc, bytes, "bench.workspace", &work);
  if (!st.ok()) {
    state.SkipWithError(st.to_string().c_str());
    return;
  }
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark idiom
    st = linear(pool, kTokens, o.x.data(), w, e, o.y.data(), work.data(), bytes);
    if (!st.ok()) return state.SkipWithError(st.to_string().c_str());
  }
  state.SetItemsProcessed(state.iterations() * 2 * kTokens * s.n * s.k);
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  using namespace tessera;
  benchmark::Initialize(&argc, argv);
  set_gemm_threads(kThreads);
  static const float kSomeBias = 0.0f;  // replaced by a real vector per run
  for (const Shape& s : kShapes) {
    const std::string name = s.name;
    LinearEpilogue e{&kSomeBias, name == "ffn_in", name == "attn_out" || name == "ffn_out"};
    benchmark::RegisterBenchmark(("sgemm/" + name).c_str(), BM_F32, s)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("f32/" + name).c_str(), BM_Packed, s, WeightType::kF32, e)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("bf16/" + name).c_str(), BM_Packed, s, WeightType::kBf16, e)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("int8/" + name).c_str(), BM_Packed, s, WeightType::kInt8, e)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    if (e.gelu) {  // the GELU epilogue's own cost: the same product without it
      LinearEpilogue plain = e;
      plain.gelu = false;
      for (WeightType t : {WeightType::kF32, WeightType::kBf16, WeightType::kInt8}) {
        const char* tn = t == WeightType::kF32 ? "f32/" : t == WeightType::kBf16 ? "bf16/" : "int8/";
        benchmark::RegisterBenchmark((tn + name + "_no_gelu").c_str(), BM_Packed, s, t, plain)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
