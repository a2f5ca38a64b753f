#include "bench_roofline.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "peaks_option.h"
#include "runtime/machine_info.h"

namespace tessera::cli {

Status resolve_peaks(const std::string& peaks_option, bool measure, int threads,
                     std::optional<KnownPeaks>* out) {
  out->reset();
  if (!peaks_option.empty()) {
    KnownPeaks known{{}, false, "given by --peaks"};
    if (Status s = parse_peaks_option(peaks_option, &known.peaks); !s.ok()) return s;
    *out = known;
    return Status::Ok();
  }
  if (!measure) return Status::Ok();
  const std::string on = std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  std::fprintf(stderr,
               "tessera: measuring this machine's peaks on %s (f32 FMA, bf16 dot product, triad; "
               "a few seconds; --peaks skips this)...\n",
               on.c_str());
  KnownPeaks known{measure_machine_peaks(threads), true, "measured on " + on};
  if (known.peaks.fma_gflops <= 0) {
    return unsupported("--plot: no FMA probe for this CPU; give the peaks with --peaks "
                       "fma=GFLOPS,triad=GBS[,bf16=GFLOPS]");
  }
  char bf16[64] = "none (no AVX512_BF16)";
  if (known.peaks.bf16_gflops) {
    std::snprintf(bf16, sizeof(bf16), "%.1f GFLOP/s", *known.peaks.bf16_gflops);
  }
  std::fprintf(stderr, "tessera: peaks: f32 FMA %.1f GFLOP/s, bf16 dot product %s, triad %.1f GB/s\n",
               known.peaks.fma_gflops, bf16, known.peaks.triad_gbps);
  *out = known;
  return Status::Ok();
}

double row_roof_gflops(const MachinePeaks& peaks, double intensity, bool bf16) {
  return roof_gflops(compute_peak_gflops(peaks, bf16), peaks.triad_gbps, intensity);
}

nlohmann::json peaks_json(const KnownPeaks& known) {
  const MachinePeaks& p = known.peaks;
  return {{"fma_gflops", p.fma_gflops},
          {"bf16_gflops", p.bf16_gflops ? nlohmann::json(*p.bf16_gflops) : nlohmann::json()},
          {"triad_gbps", p.triad_gbps},
          {"source", known.source}};
}

std::string roofline_title(int threads) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", &utc);
  return "tessera attention roofline: " + machine_info().cpu_model + ", " +
         std::to_string(threads) + (threads == 1 ? " thread, " : " threads, ") + date;
}

}  // namespace tessera::cli
