// What `bench attention` adds for its roofline: the machine's peaks (given
// by --peaks, else measured when --plot needs them), each row's roof and the
// picture's title. The drawing is roofline_plot.h's.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "runtime/machine_peaks.h"
#include "tessera/status.h"

namespace tessera::cli {

struct KnownPeaks {
  MachinePeaks peaks;
  bool measured = false;  // by this run, not given by --peaks
  std::string source;  // "measured on 2 threads" or "given by --peaks"
};

// From `peaks_option` when not empty; else, when `measure`, measured on
// `threads` threads with a progress line on stderr; else none.
Status resolve_peaks(const std::string& peaks_option, bool measure, int threads,
                     std::optional<KnownPeaks>* out);

// The roof over a row of `intensity` FLOP per ideal byte on bf16 or other
// inputs (compute_peak_gflops says which ceiling).
double row_roof_gflops(const MachinePeaks& peaks, double intensity, bool bf16);

// {"fma_gflops", "bf16_gflops" (null: none), "triad_gbps", "source"}.
nlohmann::json peaks_json(const KnownPeaks& known);

// "<CPU model name>, N threads, YYYY-MM-DD HH:MM UTC".
std::string roofline_title(int threads);

}  // namespace tessera::cli
