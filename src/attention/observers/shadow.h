// What shadow verification and canary runs share: scratch outputs through
// the tracking allocator, a coarse per-dtype tolerance, the sampler, and the
// files that let a mismatch be replayed with `tessera attention run`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "attention/dispatch/run_guarded.h"
#include "tessera/allocator.h"
#include "tessera/attention.h"
#include "tessera/backend.h"
#include "tessera/context.h"
#include "tessera/profiler.h"

namespace tessera {

// The problem with out (and lse) redirected to fresh contiguous tracked
// buffers of the same shapes and dtypes, owned by `owner` ("shadow.reference").
struct ScratchRun {
  Buffer out, lse;
  std::optional<AttentionProblem> problem;
  const AttentionArgs& args() const { return problem->args(); }
};
Status make_scratch_run(const AttentionProblem& problem, Context& ctx, const std::string& owner,
                        ScratchRun* out);

// |got - want| <= atol + rtol * |want| elementwise; NaN matches NaN only and
// -inf matches -inf only. Coarse on purpose: it catches a broken kernel, not
// a last-ulp drift (the conformance suite judges accuracy).
struct Tolerance {
  double atol = 0, rtol = 0;
};
Tolerance shadow_tolerance(DType dtype);

struct Comparison {
  bool ok = true;
  int64_t mismatches = 0;  // elements out of tolerance (out and lse)
  int64_t elements = 0;
  double max_abs_error = 0;  // over finite pairs
  // The first element out of tolerance, or the worst one when all agree.
  std::string worst;  // "out[0, 3, 1, 5]: got 0.12 want 0.65 (bound 0.0001)"
};
// Compares `got` (out, lse) with `want` element by element; both must have
// the shapes of the same valid args.
Comparison compare_results(const AttentionArgs& got, const AttentionArgs& want);

// Whether call number `call` is sampled at `rate` (deterministic in seed).
bool sampled(uint64_t seed, uint64_t call, double rate);

// FNV-1a over q, k and v's elements: names the inputs in a mismatch report.
uint64_t input_fingerprint(const AttentionArgs& args);

// Writes q.npy, k.npy, v.npy (contiguous [B, S, H, D]; bf16 as uint16 bits)
// and, when given, got.npy / want.npy into `dir` (created), and returns the
// two `tessera attention run` lines that replay the case on `backend` and on
// `trusted`.
Status write_replay_case(const AttentionArgs& args, const AttentionArgs* got,
                         const AttentionArgs* want, const std::string& dir,
                         const std::string& backend, const std::string& trusted,
                         std::string* commands);

}  // namespace tessera
