#include "runtime/machine_peaks.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "runtime/cpu_features.h"

namespace tessera {

namespace {

// Independent accumulator chains per thread: FMA latency (4-5 cycles) times
// two FMA pipes needs at least 10 in flight to keep both pipes busy; the bf16
// dot product's latency is about the same.
constexpr int kChains = 12;
constexpr long kFmaIterations = 200'000'000 / kChains;
constexpr size_t kTriadFloats = size_t{24} << 20;  // 96 MiB per array, 3 arrays

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
// drop it; `seed` is read at run time for the same reason. Compiled for their
// ISA by target attributes, so the library runs on any x86-64 and calls
// them only where peak_probe_available says so. Three near-copies on
// purpose: a shared template cannot take each one's target attribute.
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

// Two lanes are enough to keep every chain live. (Not _mm512_reduce_add_ps:
// GCC 12's header trips its own -Wuninitialized.)
__attribute__((target("avx512f"))) float first_and_last(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  return lanes[0] + lanes[15];
}

__attribute__((target("avx512f"))) float fma512(float seed) {
  __m512 acc[kChains];
  const __m512 mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(seed * 1e-6f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(seed + static_cast<float>(c));
  for (long it = 0; it < kFmaIterations; ++it) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], mul, add);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  return first_and_last(sum);
}

// vdpbf16ps: per f32 lane acc += a[2i] * b[2i] + a[2i+1] * b[2i+1].
__attribute__((target("avx512f,avx512bf16"))) float bf16_dot512(float seed) {
  __m512 acc[kChains];
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(seed * 1e-6f));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f), _mm512_set1_ps(seed));
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(seed + static_cast<float>(c));
  for (long it = 0; it < kFmaIterations; ++it) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  return first_and_last(sum);
}

// vpdpbusd: per int32 lane acc += the sum of 4 u8 x s8 products (int8
// weights' products on VNNI; the sums wrap, which no one reads).
__attribute__((target("avx512f,avx512vnni"))) float int8_dot512(float seed) {
  __m512i acc[kChains];
  const int s = static_cast<int>(seed);
  const __m512i a = _mm512_set1_epi32(0x01020304 + s), b = _mm512_set1_epi32(0x05060708 - s);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_epi32(s + c);
  for (long it = 0; it < kFmaIterations; ++it) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_dpbusd_epi32(acc[c], a, b);
  }
  __m512i sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_epi32(sum, acc[c]);
  // (Not _mm512_cvtepi32_ps: GCC 12's header trips -Wuninitialized there too.)
  alignas(64) int32_t lanes[16];
  _mm512_store_si512(lanes, sum);
  return static_cast<float>(lanes[0]) + static_cast<float>(lanes[15]);
}
#endif

// One compute probe: its kernel and the FLOPs one call does.
struct ComputeKernel {
  float (*fn)(float) = nullptr;
  double flops_per_call = 0;
};

ComputeKernel compute_kernel(PeakProbe probe) {
  // Operations per instruction and lane, a multiply-add counting 2: an FMA
  // is 2, a bf16 pair dot product 4, a u8 x s8 quad dot product 8.
  const double per_lane_iteration = static_cast<double>(kChains) * kFmaIterations;
#if defined(__x86_64__)
  switch (probe) {
    case PeakProbe::kFma256F32:
      return {fma256, 2.0 * 8 * per_lane_iteration};
    case PeakProbe::kFma512F32:
      return {fma512, 2.0 * 16 * per_lane_iteration};
    case PeakProbe::kBf16Dot512:
      return {bf16_dot512, 4.0 * 16 * per_lane_iteration};
    case PeakProbe::kInt8Dot512:
      return {int8_dot512, 8.0 * 16 * per_lane_iteration};
    case PeakProbe::kTriad:
      break;
  }
#endif
  (void)probe;
  (void)per_lane_iteration;
  return {};
}

// Best and median of `repeats` runs of body, each doing `work_per_thread`
// (FLOPs or bytes) on every thread.
PeakFigure time_repeats(PeakProbe probe, int threads, int repeats, double work_per_thread,
                        const std::function<void(int)>& body) {
  std::vector<double> rates;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    rates.push_back(work_per_thread * threads / run_threads(threads, body) / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  PeakFigure f;
  f.probe = probe;
  f.threads = threads;
  f.best = rates.back();
  f.median = rates[rates.size() / 2];
  f.unit = peak_probe_unit(probe);
  return f;
}

PeakFigure measure_triad(int threads, int repeats) {
  const std::unique_ptr<float[]> a(new float[kTriadFloats]), b(new float[kTriadFloats]),
      c(new float[kTriadFloats]);
  // Touched once before timing, so no repeat pays the page faults.
  std::fill_n(a.get(), kTriadFloats, 0.0f);
  std::fill_n(b.get(), kTriadFloats, 1.0f);
  std::fill_n(c.get(), kTriadFloats, 2.0f);
  const float s = 1.0f + 1.0f / static_cast<float>(threads);
  const size_t per = kTriadFloats / static_cast<size_t>(threads);
  // STREAM counts 3 arrays x 4 bytes per element (no write-allocate traffic).
  const double bytes = 3.0 * sizeof(float) * static_cast<double>(per);
  PeakFigure f = time_repeats(PeakProbe::kTriad, threads, repeats, bytes, [&](int ti) {
    const size_t lo = per * static_cast<size_t>(ti), hi = lo + per;
    for (size_t i = lo; i < hi; ++i) a[i] = b[i] + s * c[i];
  });
  volatile float sink = a[kTriadFloats / 2];
  (void)sink;
  return f;
}

}  // namespace

std::string_view peak_probe_name(PeakProbe probe) {
  switch (probe) {
    case PeakProbe::kFma256F32:
      return "fma256_f32";
    case PeakProbe::kFma512F32:
      return "fma512_f32";
    case PeakProbe::kBf16Dot512:
      return "bf16_dot512";
    case PeakProbe::kInt8Dot512:
      return "int8_dot512";
    case PeakProbe::kTriad:
      return "triad";
  }
  return "unknown";
}

std::string_view peak_probe_unit(PeakProbe probe) {
  switch (probe) {
    case PeakProbe::kTriad:
      return "GB/s";
    case PeakProbe::kInt8Dot512:
      return "GOP/s";
    default:
      return "GFLOP/s";
  }
}

bool peak_probe_available(PeakProbe probe) {
  if (probe == PeakProbe::kTriad) return true;
  // The features tessera's kernels may use (TESSERA_CPU_CAP applied), so a
  // capped run's roofline is the capped machine's.
  const CpuFeatures& f = cpu_features();
  switch (probe) {
    case PeakProbe::kFma256F32:
      return f.avx2_fma;
    case PeakProbe::kFma512F32:
      return f.avx512;
    case PeakProbe::kBf16Dot512:
      return f.avx512_bf16;
    case PeakProbe::kInt8Dot512:
      return f.avx512_vnni;
    case PeakProbe::kTriad:
      break;
  }
  return false;
}

PeakFigure measure_peak(PeakProbe probe, int threads, int repeats) {
  threads = std::max(1, threads);
  if (probe == PeakProbe::kTriad) return measure_triad(threads, repeats);
  const ComputeKernel k = compute_kernel(probe);
  if (k.fn == nullptr || !peak_probe_available(probe)) {
    return {probe, threads, 0, 0, peak_probe_unit(probe)};
  }
  std::vector<float> sinks(static_cast<size_t>(threads));
  const float seed = 1.0f + 1.0f / static_cast<float>(threads);
  PeakFigure f = time_repeats(probe, threads, repeats, k.flops_per_call,
                              [&](int t) { sinks[static_cast<size_t>(t)] = k.fn(seed); });
  volatile float sink = sinks[0];
  (void)sink;
  return f;
}

MachinePeaks measure_machine_peaks(int threads) {
  MachinePeaks peaks;
  for (PeakProbe probe : kAllPeakProbes) {
    // The roofline's products are f32 and bf16: int8 is peak_probe's alone.
    if (!peak_probe_available(probe) || probe == PeakProbe::kInt8Dot512) continue;
    const double best = measure_peak(probe, threads).best;
    switch (probe) {
      case PeakProbe::kFma256F32:
      case PeakProbe::kFma512F32:
        peaks.fma_gflops = std::max(peaks.fma_gflops, best);
        break;
      case PeakProbe::kBf16Dot512:
        peaks.bf16_gflops = best;
        break;
      case PeakProbe::kTriad:
        peaks.triad_gbps = best;
        break;
      case PeakProbe::kInt8Dot512:
        break;
    }
  }
  return peaks;
}

double roof_gflops(double peak_gflops, double bandwidth_gbps, double intensity) {
  return std::min(peak_gflops, bandwidth_gbps * intensity);
}

double compute_peak_gflops(const MachinePeaks& peaks, bool bf16) {
  return bf16 && peaks.bf16_gflops ? *peaks.bf16_gflops : peaks.fma_gflops;
}

}  // namespace tessera
