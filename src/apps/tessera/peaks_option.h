// `--peaks fma=GFLOPS,triad=GBS[,bf16=GFLOPS]`: the machine's ceilings given
// on the command line (from an earlier run, bench/peak/peak_probe or another
// machine's notes) so `bench attention --plot` need not measure them.
#pragma once

#include <string_view>

#include "runtime/machine_peaks.h"
#include "tessera/status.h"

namespace tessera::cli {

// Each field at most once; fma and triad required, bf16 optional; every value
// a finite number > 0. Errors name the field and the value.
Status parse_peaks_option(std::string_view text, MachinePeaks* out);

}  // namespace tessera::cli
