// Forward-pass speed of the encoder on the default model: 200 sequences of
// mixed length (16..256 tokens, seeded), sorted by length and packed into
// batches under a token budget, as the pipeline does. One benchmark per
// attention policy (auto, then each CPU backend forced), then auto again with
// bf16 weights (embed-bf16/auto; skipped where the CPU has no bf16 kernel).
// After the runs, a per-stage time breakdown from the profiler goes to stderr.
//   build/release/bench/model/encoder_bench [--benchmark_min_time=2]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>

#include "model/encoder.h"
#include "tessera/registry.h"

namespace tessera::model {
namespace {

constexpr int kSequences = 200;
constexpr int kMinLen = 16, kMaxLen = 256;
constexpr int64_t kTokenBudget = 8192;

struct Workload {
  std::vector<std::vector<std::vector<int32_t>>> batches;
  int64_t tokens = 0;
};

Workload make_workload(const Encoder& enc) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> len(kMinLen, std::min(kMaxLen, enc.max_seq_length()));
  std::uniform_int_distribution<int32_t> id(1000, enc.config().network.vocab_size - 1);
  std::vector<std::vector<int32_t>> seqs(kSequences);
  for (auto& s : seqs) {
    s.resize(len(rng));
    for (auto& t : s) t = id(rng);
    // Framed as the tokenizer's template frames a text ([CLS] ... [SEP]).
    const SequenceFrame& frame = enc.tokenizer().frame();
    std::copy(frame.prefix.begin(), frame.prefix.end(), s.begin());
    std::copy(frame.suffix.rbegin(), frame.suffix.rend(), s.rbegin());
  }
  std::sort(seqs.begin(), seqs.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  Workload w;
  int64_t in_batch = 0;
  for (auto& s : seqs) {
    if (w.batches.empty() || in_batch + static_cast<int64_t>(s.size()) > kTokenBudget) {
      w.batches.emplace_back();
      in_batch = 0;
    }
    in_batch += s.size();
    w.tokens += s.size();
    w.batches.back().push_back(std::move(s));
  }
  return w;
}

struct Shared {
  Context ctx;
  Registry registry;
  std::unique_ptr<Encoder> encoder;
  std::unique_ptr<Encoder> encoder_bf16;  // null where the CPU has no bf16 kernel
  Workload work;
  std::map<std::string, std::map<std::string, int64_t>> stage_ns;  // policy -> stage -> ns
};

Shared& shared() {
  static Shared* s = [] {
    auto* sh = new Shared();
    register_builtin_backends(sh->registry);
    const Status st = Encoder::load(std::string(TESSERA_SOURCE_DIR) + "/models/all-MiniLM-L6-v2",
                                    {}, sh->ctx, &sh->encoder);
    if (!st.ok()) {
      std::fprintf(stderr, "%s (run scripts/install-deps.sh)\n", st.to_string().c_str());
      std::exit(1);
    }
    EncoderOptions bf16;
    bf16.weights = WeightPrecision::kBf16;
    if (Encoder::load(std::string(TESSERA_SOURCE_DIR) + "/models/all-MiniLM-L6-v2", bf16, sh->ctx,
                      &sh->encoder_bf16)
            .code() == StatusCode::kUnsupported) {
      sh->encoder_bf16.reset();
    }
    sh->work = make_workload(*sh->encoder);
    return sh;
  }();
  return *s;
}

// "model.layer3.ffn_in_gemm" -> "ffn_in_gemm"; the dispatcher's spans -> "attention".
std::string stage_of(const Span& span) {
  if (!span.backend.empty()) return "attention";
  const auto dot = span.name.rfind('.');
  return dot == std::string::npos ? span.name : span.name.substr(dot + 1);
}

void BM_Embed(benchmark::State& state, const Policy& policy, Encoder* encoder,
              const std::string& key) {
  Shared& sh = shared();
  Dispatcher dispatcher(sh.registry, policy);
  std::vector<float> out(static_cast<size_t>(kSequences) * encoder->dim());
  sh.ctx.profiler().clear();
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark idiom
    float* dst = out.data();
    for (const auto& batch : sh.work.batches) {
      const Status st = encoder->embed(batch, dispatcher, sh.ctx, dst);
      if (!st.ok()) {
        state.SkipWithError(st.to_string().c_str());
        return;
      }
      dst += batch.size() * encoder->dim();
    }
  }
  state.SetItemsProcessed(state.iterations() * sh.work.tokens);  // tokens/s
  state.counters["seqs/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * kSequences,
                                                benchmark::Counter::kIsRate);
  auto& stages = sh.stage_ns[key];
  for (const Span& s : sh.ctx.profiler().spans()) stages[stage_of(s)] += s.duration_ns;
}

void print_breakdown() {
  for (const auto& [policy, stages] : shared().stage_ns) {
    int64_t total = 0;
    for (const auto& [name, ns] : stages) total += ns;
    std::fprintf(stderr, "stage share, policy %s:\n", policy.c_str());
    for (const auto& [name, ns] : stages) {
      std::fprintf(stderr, "  %-16s %6.1f%%\n", name.c_str(), 100.0 * ns / std::max<int64_t>(total, 1));
    }
  }
}

}  // namespace
}  // namespace tessera::model

int main(int argc, char** argv) {
  using namespace tessera;
  benchmark::Initialize(&argc, argv);
  model::Shared& sh = model::shared();
  benchmark::RegisterBenchmark("embed/auto", model::BM_Embed, Policy{}, sh.encoder.get(), "auto")
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  for (Backend* b : sh.registry.backends()) {
    if (b->device().kind != DeviceKind::kCpu || b->name() == "reference") continue;
    Policy only;
    only.only = {std::string(b->name())};
    benchmark::RegisterBenchmark(("embed/only:" + std::string(b->name())).c_str(), model::BM_Embed,
                                 only, sh.encoder.get(), only.to_string())
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  if (sh.encoder_bf16) {
    benchmark::RegisterBenchmark("embed-bf16/auto", model::BM_Embed, Policy{},
                                 sh.encoder_bf16.get(), "auto, bf16 weights")
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::RunSpecifiedBenchmarks();
  model::print_breakdown();
  benchmark::Shutdown();
  return 0;
}
