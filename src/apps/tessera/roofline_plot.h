// The roofline picture of `tessera bench attention --plot FILE.png`, drawn
// by PLplot's pngcairo device (docs/DECISIONS.md, "Roofline plot"): log-log,
// x = arithmetic intensity (FLOP per ideal byte), y = GFLOP/s; the f32 roof
// min(FMA peak, triad * x), the bf16 dot product's ceiling where there is
// one; one marker per (backend, shape), backends by colour and glyph, shapes
// by number with a key.
#pragma once

#include <string>
#include <vector>

#include "runtime/machine_peaks.h"
#include "tessera/status.h"

namespace tessera::cli {

struct RooflinePoint {
  std::string backend;
  int shape = 0;  // 1-based index into RooflineChart::shapes
  double intensity = 0;  // FLOP per ideal byte
  double gflops = 0;
};

struct RooflineChart {
  std::string title;
  std::string peaks_note;  // how the peaks were obtained ("measured on 2 threads")
  MachinePeaks peaks;
  std::string no_bf16_note;  // the legend's line when peaks.bf16_gflops is absent
  std::vector<std::string> shapes;  // the key: shape i+1's text
  std::vector<RooflinePoint> points;  // points <= 0 on either axis are left out
};

// The picture's size in pixels.
inline constexpr int kRooflineWidth = 1600;
inline constexpr int kRooflineHeight = 800;

// Refuses a path that does not end in ".png" or cannot be written (the
// error names the path); leaves no file behind that was not there.
Status check_plot_path(const std::string& path);

// Writes the chart as a PNG to `path`.
Status write_roofline_png(const RooflineChart& chart, const std::string& path);

}  // namespace tessera::cli
