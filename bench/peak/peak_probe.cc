// peak_probe: this machine's ceilings, measured on the cores tessera runs on,
// so benchmark figures can be stated as a percentage of something real.
//   - fp32 FMA GFLOP/s: 256-bit (AVX2+FMA) and 512-bit (AVX-512F) where the
//     CPU has them, on 1 and N threads;
//   - memory GB/s: a STREAM-style triad a[i] = b[i] + s * c[i] over arrays far
//     larger than the last-level cache, on 1 and N threads.
// Prints one line per figure; --json FILE also writes them for bench scripts.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

// Independent accumulator chains per thread: FMA latency (4-5 cycles) times
// two FMA pipes needs at least 10 in flight to keep both pipes busy.
constexpr int kChains = 12;
constexpr long kFmaIterations = 200'000'000 / kChains;
constexpr size_t kTriadFloats = size_t{24} << 20;  // 96 MiB per array, 3 arrays
constexpr int kRepeats = 7;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs fn(thread_index) on `threads` threads at once; returns the wall time.
double run_threads(int threads, const std::function<void(int)>& fn) {
  std::vector<std::thread> pool;
  const double t0 = now_s();
  for (int t = 1; t < threads; ++t) pool.emplace_back(fn, t);
  fn(0);
  for (auto& th : pool) th.join();
  return now_s() - t0;
}

#if defined(__x86_64__)
// Each loop returns a value derived from every chain so the compiler cannot
// drop it; `seed` is read at run time for the same reason.
__attribute__((target("avx2,fma"))) float fma256(float seed) {
  __m256 acc[kChains];
  const __m256 mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(seed * 1e-6f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(seed + static_cast<float>(c));
  for (long it = 0; it < kFmaIterations; ++it) {
    // Unrolled so the chains live in registers, not on the stack.
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], mul, add);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  return _mm256_cvtss_f32(sum);
}

__attribute__((target("avx512f"))) float fma512(float seed) {
  __m512 acc[kChains];
  const __m512 mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(seed * 1e-6f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(seed + static_cast<float>(c));
  for (long it = 0; it < kFmaIterations; ++it) {
    // Unrolled so the chains live in registers, not on the stack.
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], mul, add);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  return lanes[0] + lanes[15];
}
#endif

struct Figure {
  std::string what;
  int threads;
  double best, median;
  std::string unit;
};

Figure measure(const std::string& what, int threads, double work_per_thread,
               const std::string& unit, const std::function<void(int)>& body) {
  std::vector<double> rates;
  for (int r = 0; r < kRepeats; ++r) {
    rates.push_back(work_per_thread * threads / run_threads(threads, body) / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  return {what, threads, rates.back(), rates[rates.size() / 2], unit};
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  int max_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) {
      json_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      max_threads = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--threads N] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  std::vector<int> thread_counts = {1};
  if (max_threads > 1) thread_counts.push_back(max_threads);

  std::vector<Figure> figures;
  volatile float sink = 0;
  const float seed = static_cast<float>(argc);
#if defined(__x86_64__)
  __builtin_cpu_init();
  // 2 FLOPs per lane per FMA.
  const struct {
    const char* name;
    int lanes;
    bool present;
    float (*fn)(float);
  } fmas[] = {
      {"fma256_f32", 8, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), fma256},
      {"fma512_f32", 16, static_cast<bool>(__builtin_cpu_supports("avx512f")), fma512}};
  for (const auto& f : fmas) {
    if (!f.present) {
      std::printf("%-12s not available on this CPU\n", f.name);
      continue;
    }
    const double flops = 2.0 * f.lanes * kChains * static_cast<double>(kFmaIterations);
    for (int t : thread_counts) {
      figures.push_back(measure(f.name, t, flops, "GFLOP/s", [&](int) { sink = f.fn(seed); }));
    }
  }
#else
  std::printf("FMA probe: only x86-64 is implemented\n");
#endif

  std::vector<float> a(kTriadFloats), b(kTriadFloats, 1.0f), c(kTriadFloats, 2.0f);
  const float s = seed;
  for (int t : thread_counts) {
    const size_t per = kTriadFloats / static_cast<size_t>(t);
    // STREAM counts 3 arrays x 4 bytes per element (no write-allocate traffic).
    const double bytes = 3.0 * sizeof(float) * static_cast<double>(per);
    figures.push_back(measure("triad", t, bytes, "GB/s", [&](int ti) {
      const size_t lo = per * static_cast<size_t>(ti), hi = lo + per;
      for (size_t i = lo; i < hi; ++i) a[i] = b[i] + s * c[i];
    }));
  }
  sink = sink + a[kTriadFloats / 2];

  nlohmann::json rows = nlohmann::json::array();
  for (const Figure& f : figures) {
    std::printf("%-12s threads=%d  best %8.1f %s  median %8.1f %s\n", f.what.c_str(), f.threads,
                f.best, f.unit.c_str(), f.median, f.unit.c_str());
    rows.push_back({{"what", f.what},
                    {"threads", f.threads},
                    {"best", f.best},
                    {"median", f.median},
                    {"unit", f.unit}});
  }
  if (!json_path.empty()) {
    std::ofstream(json_path) << rows.dump(2) << "\n";
  }
  return 0;
}
