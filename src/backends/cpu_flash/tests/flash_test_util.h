// Test helpers for cpu.flash: verify's cases (src/verify/case.h) run on the
// backend once per Highway target and judged as the conformance suite judges
// them (verify::check_backend: verify's tolerance rule against the float64
// reference, guard bands, untouched inputs, leaks).
#pragma once

#include <string>
#include <vector>

#include "tessera/backend.h"
#include "verify/case.h"
#include "verify/materialize.h"

namespace tessera::flash_test {

using verify::AttentionCase;
using verify::BiasKind;
using verify::Layout;
using verify::OwnedCase;  // for tests of check(), workspaces, params

// Materializes `c` and computes its expected results once, then runs
// `backend` once per Highway target this CPU supports
// (hwy::SetSupportedTargetsForTest) where it can run `c`, each in a fresh
// Context of `threads`, judged by verify::check_backend. Returns "" when
// every run passes, else one line per failing target with verify's message
// (the worst element included). A Context left with a leak fails too.
std::string compare_on_all_targets(Backend& backend, const AttentionCase& c, int threads = 2);

// The same for plain cpu.flash and, on each target, every product path the
// case can take there besides the one plain cpu.flash takes (the variants
// cpu.flash:f32 / :bf16dot / :amx), so every path this CPU has is judged.
std::string compare_paths_on_all_targets(const AttentionCase& c, int threads = 2);

// Whether one of check()'s reasons contains `word`.
bool mentions(const std::vector<std::string>& reasons, const std::string& word);

}  // namespace tessera::flash_test
