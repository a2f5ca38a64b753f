// peak_probe: this machine's ceilings (src/runtime/machine_peaks.h: f32 FMA
// 256- and 512-bit, the bf16 dot product, a STREAM-style triad) on 1 and N
// threads, so benchmark figures can be stated as a percentage of something
// real. Prints one line per figure; --json FILE also writes them for bench
// scripts (bench/attention_table.py).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "runtime/machine_peaks.h"
#include "runtime/run_catching.h"

namespace {

int run_probe(int argc, char** argv) {
  using tessera::PeakFigure;
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

  std::vector<PeakFigure> figures;
  for (tessera::PeakProbe probe : tessera::kAllPeakProbes) {
    const std::string name(tessera::peak_probe_name(probe));
    if (!tessera::peak_probe_available(probe)) {
      std::printf("%-12s not available on this CPU\n", name.c_str());
      continue;
    }
    for (int t : thread_counts) figures.push_back(tessera::measure_peak(probe, t));
  }

  nlohmann::json rows = nlohmann::json::array();
  for (const PeakFigure& f : figures) {
    const std::string what(tessera::peak_probe_name(f.probe)), unit(f.unit);
    std::printf("%-12s threads=%d  best %8.1f %s  median %8.1f %s\n", what.c_str(), f.threads,
                f.best, unit.c_str(), f.median, unit.c_str());
    rows.push_back({{"what", what},
                    {"threads", f.threads},
                    {"best", f.best},
                    {"median", f.median},
                    {"unit", unit}});
  }
  if (!json_path.empty()) {
    std::ofstream(json_path) << rows.dump(2) << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tessera::run_catching("peak_probe", 1, [&] { return run_probe(argc, argv); });
}
