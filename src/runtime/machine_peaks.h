// This machine's ceilings, measured on the cores tessera runs on, so that a
// benchmark figure can be stated as a fraction of something real:
//   - f32 FMA GFLOP/s with 256-bit (AVX2+FMA) and 512-bit (AVX-512F) FMAs;
//   - the bf16 dot product's GFLOP/s (vdpbf16ps, AVX512_BF16);
//   - the int8 dot product's GOP/s (vpdpbusd, AVX512_VNNI: int8 weights);
//   - memory GB/s of a STREAM-style triad a[i] = b[i] + s * c[i] over arrays
//     far larger than the last-level cache.
// One implementation for bench/peak/peak_probe and `tessera bench attention`
// (its roofline and "% of roof"). Library tessera_peaks: it needs threads only.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessera {

enum class PeakProbe { kFma256F32, kFma512F32, kBf16Dot512, kInt8Dot512, kTriad };
inline constexpr PeakProbe kAllPeakProbes[] = {PeakProbe::kFma256F32, PeakProbe::kFma512F32,
                                               PeakProbe::kBf16Dot512, PeakProbe::kInt8Dot512,
                                               PeakProbe::kTriad};
// Repeats per figure: the best is the ceiling, the median shows the noise.
inline constexpr int kPeakRepeats = 7;

// "fma256_f32", "fma512_f32", "bf16_dot512", "int8_dot512", "triad" (bench
// scripts take the largest "fma*" figure as the f32 peak, so the others'
// names must not start so).
std::string_view peak_probe_name(PeakProbe probe);
// "GFLOP/s", "GOP/s" (int8: integer multiply-adds count 2) or "GB/s" (triad).
std::string_view peak_probe_unit(PeakProbe probe);
// Whether this CPU (and OS: AVX-512 state enabled) runs the probe's
// instructions; the triad always runs.
bool peak_probe_available(PeakProbe probe);

struct PeakFigure {
  PeakProbe probe = PeakProbe::kTriad;
  int threads = 1;
  double best = 0;        // GFLOP/s or GB/s, the fastest repeat
  double median = 0;      // the middle repeat
  std::string_view unit;  // peak_probe_unit
};

// Runs the probe on `threads` threads at once, `repeats` times. The probe
// must be available (peak_probe_available).
PeakFigure measure_peak(PeakProbe probe, int threads, int repeats = kPeakRepeats);

// The three numbers of a roofline at one thread count.
struct MachinePeaks {
  double fma_gflops = 0;  // the best f32 FMA probe this CPU has
  double triad_gbps = 0;
  std::optional<double> bf16_gflops;  // absent: no bf16 dot product on this CPU
};

// Measures every available probe on `threads` threads (a few seconds).
MachinePeaks measure_machine_peaks(int threads);

// The roofline: the GFLOP/s a kernel of `intensity` FLOP per byte of memory
// traffic can reach, min(peak, bandwidth * intensity).
double roof_gflops(double peak_gflops, double bandwidth_gbps, double intensity);
// The compute ceiling a kernel on `bf16` inputs is held to: the bf16 dot
// product's where measured, else the f32 FMA's (bf16 widened to f32).
double compute_peak_gflops(const MachinePeaks& peaks, bool bf16);

}  // namespace tessera
