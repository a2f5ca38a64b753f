// The machine's ceilings (src/runtime/machine_peaks.h): the roof formula, the
// compute ceiling per dtype, and that every probe this CPU has runs and
// reports a positive figure. No figure is compared with a speed: the
// machines are shared.
#include "runtime/machine_peaks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

namespace tessera {
namespace {

TEST(Roof, IsBandwidthTimesIntensityBelowTheRidge) {
  // Peak 100 GFLOP/s, 10 GB/s: the ridge is at 10 FLOP/byte.
  EXPECT_DOUBLE_EQ(roof_gflops(100, 10, 0.5), 5);
  EXPECT_DOUBLE_EQ(roof_gflops(100, 10, 2), 20);
  EXPECT_DOUBLE_EQ(roof_gflops(100, 10, 9.99), 99.9);
}

TEST(Roof, IsThePeakFromTheRidgeOn) {
  EXPECT_DOUBLE_EQ(roof_gflops(100, 10, 10), 100);
  EXPECT_DOUBLE_EQ(roof_gflops(100, 10, 10.01), 100);
  EXPECT_DOUBLE_EQ(roof_gflops(100, 10, 1e6), 100);
}

TEST(Roof, Bf16UsesTheDotProductPeakOnlyWhereMeasured) {
  MachinePeaks p;
  p.fma_gflops = 160;
  p.triad_gbps = 15;
  EXPECT_DOUBLE_EQ(compute_peak_gflops(p, /*bf16=*/false), 160);
  EXPECT_DOUBLE_EQ(compute_peak_gflops(p, /*bf16=*/true), 160);  // widened to f32
  p.bf16_gflops = 880;
  EXPECT_DOUBLE_EQ(compute_peak_gflops(p, /*bf16=*/false), 160);
  EXPECT_DOUBLE_EQ(compute_peak_gflops(p, /*bf16=*/true), 880);
}

TEST(PeakProbe, NamesAreDistinctAndOnlyF32FmaStartsWithFma) {
  // bench/attention_table.py takes the largest "fma*" figure as the f32 peak.
  std::set<std::string> names;
  for (PeakProbe p : kAllPeakProbes) {
    const std::string name(peak_probe_name(p));
    EXPECT_TRUE(names.insert(name).second) << name;
    const bool f32_fma = p == PeakProbe::kFma256F32 || p == PeakProbe::kFma512F32;
    EXPECT_EQ(name.rfind("fma", 0) == 0, f32_fma) << name;
  }
}

TEST(PeakProbe, EveryAvailableProbeReportsAPositiveFigure) {
  EXPECT_TRUE(peak_probe_available(PeakProbe::kTriad));
  for (PeakProbe p : kAllPeakProbes) {
    if (!peak_probe_available(p)) continue;
    for (int threads : {1, 2}) {
      const PeakFigure f = measure_peak(p, threads, /*repeats=*/1);
      EXPECT_EQ(f.probe, p);
      EXPECT_EQ(f.threads, threads);
      EXPECT_TRUE(std::isfinite(f.best) && f.best > 0) << peak_probe_name(p) << " " << f.best;
      EXPECT_EQ(f.best, f.median);  // one repeat
      EXPECT_EQ(f.unit, p == PeakProbe::kTriad        ? "GB/s"
                        : p == PeakProbe::kInt8Dot512 ? "GOP/s"
                                                      : "GFLOP/s");
    }
  }
}

TEST(MachinePeaks, HasAnFmaPeakAndABandwidthOnX86) {
#if defined(__x86_64__)
  const MachinePeaks p = measure_machine_peaks(1);
  EXPECT_GT(p.fma_gflops, 0);
  EXPECT_GT(p.triad_gbps, 0);
  EXPECT_EQ(p.bf16_gflops.has_value(), peak_probe_available(PeakProbe::kBf16Dot512));
#else
  GTEST_SKIP() << "the FMA probes are x86-64 only";
#endif
}

}  // namespace
}  // namespace tessera
