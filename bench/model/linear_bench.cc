// The encoder's four Linear products alone (all-MiniLM-L6-v2 shapes, one
// 8,192-token batch), f32 weights (sgemm) vs bf16 weights (gemm_bf16_weights,
// x rounded to bf16 per call); GFLOP/s as items/s x 1e-9.
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
  for (auto _ : state) {
    const Status st = sgemm(false, true, kTokens, s.n, s.k, 1.0f, o.x.data(), s.k, o.w.data(), s.k,
                            0.0f, o.y.data(), s.n);
    if (!st.ok()) return state.SkipWithError(st.to_string().c_str());
  }
  state.SetItemsProcessed(state.iterations() * 2 * kTokens * s.n * s.k);
}

void BM_Bf16(benchmark::State& state, Shape s) {
  Operands o(s);
  TrackingAllocator alloc;
  Bf16Weights w;
  size_t bytes = 0;
  Buffer work;
  Status st = Bf16Weights::create(o.w.data(), s.n, s.k, alloc, "bench.weights", &w);
  if (st.ok()) st = gemm_bf16_workspace_bytes(kTokens, s.k, w, s.n, &bytes);
  if (st.ok()) st = Buffer::allocate(alloc, bytes, "bench.workspace", &work);
  if (!st.ok()) {
    state.SkipWithError(st.to_string().c_str());
    return;
  }
  for (auto _ : state) {
    st = gemm_bf16_weights(kTokens, o.x.data(), s.k, w, o.y.data(), s.n, work.data(), bytes);
    if (!st.ok()) return state.SkipWithError(st.to_string().c_str());
  }
  state.SetItemsProcessed(state.iterations() * 2 * kTokens * s.n * s.k);
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  using namespace tessera;
  benchmark::Initialize(&argc, argv);
  for (const Shape& s : kShapes) {
    benchmark::RegisterBenchmark((std::string("f32/") + s.name).c_str(), BM_F32, s)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark((std::string("bf16/") + s.name).c_str(), BM_Bf16, s)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
