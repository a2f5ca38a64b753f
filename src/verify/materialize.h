// MaterializedCase: an AttentionCase turned into tracked memory with
// deterministic random inputs.
//
// Shapes and strides come from case_geometry() (Packing::kAsCase).
// Two copies of every input exist:
//   - logical: f32, contiguous, values already rounded to the case dtype
//       q [R, Tq, Hq, D], k [R, Tk, Hkv, D], v [R, Tk, Hkv, Dv], bias (its shape)
//     where R = rows_batch() (1 when varlen) and Tq, Tk the rows per batch entry;
//   - under test: the case dtype and layout, guarded (see guarded_tensor.h).
// Outputs are judged in "row order": out [R, Tq, Hq, Dv] and lse [R, Tq, Hq].
#pragma once

#include <string>
#include <vector>

#include "tessera/allocator.h"
#include "tessera/attention.h"
#include "verify/case.h"
#include "verify/case_geometry.h"
#include "verify/guarded_tensor.h"

namespace tessera::verify {

inline constexpr std::string_view kCaseOwner = "verify.case";

class MaterializedCase {
 public:
  MaterializedCase() = default;
  static Status create(const AttentionCase& spec, TrackingAllocator& alloc, MaterializedCase* out);

  const AttentionCase& spec() const { return spec_; }
  // The views under test; outputs hold whatever the last run left.
  const AttentionArgs& args() const { return args_; }
  // The same problem over the logical f32 inputs, writing f32 `out` in row
  // order [R, Tq, Hq, Dv] and f32 `lse` in row order [R, Tq, Hq].
  AttentionArgs logical_args(float* out, float* lse) const;

  // The varlen offsets, writable for invalid-args cases (null when not varlen).
  int32_t* cu_seqlens_q() { return cu_q_.as<int32_t>(); }
  int32_t* cu_seqlens_k() { return cu_k_.as<int32_t>(); }

  int64_t rows() const;  // R * Tq * Hq: rows of out
  // "[b=1, i=5, h=3]" for a row (varlen: the sequence and the row inside it).
  std::string row_name(int64_t row) const;

  // Fills out (and lse) with kPoisonByte.
  void poison_outputs();
  // Guard bands and stride gaps of out and lse are intact.
  Status check_output_guards() const;
  // out and lse still hold the poison (an error must leave them untouched).
  Status check_outputs_poisoned() const;
  // q, k, v, bias: view elements equal the logical values, gaps and guards intact.
  Status check_inputs_untouched() const;
  // Copies the outputs under test into row order, as f32.
  void read_out(float* dst) const;
  void read_lse(float* dst) const;

 private:
  AttentionCase spec_;
  AttentionArgs args_;
  Buffer q_log_, k_log_, v_log_, bias_log_;
  Buffer cu_q_, cu_k_;
  GuardedTensor q_, k_, v_, bias_, out_, lse_;
  TensorGeometry bias_stored_;  // the bias as stored (bias_view() widens kKeyStride0)

  Status allocate(TrackingAllocator& alloc);
  void fill_inputs();
  AttentionArgs views(const TensorView& q, const TensorView& k, const TensorView& v,
                      const TensorView& bias) const;
};

// A MaterializedCase in an allocator of its own, not a Context's, so a
// test's accounting sees only what backends allocate; `args` is a copy of
// its views for the test to change (break a shape, set a mask). For tests
// that need a problem with random inputs rather than a judged case.
class OwnedCase {
 public:
  explicit OwnedCase(const AttentionCase& spec);
  OwnedCase(const OwnedCase&) = delete;
  OwnedCase& operator=(const OwnedCase&) = delete;

  const Status& status() const { return status_; }  // of the materialization
  MaterializedCase& materialized() { return m_; }
  // out as f32 in row order [R, Tq, Hq, Dv] (what the last run left).
  std::vector<float> out() const;

  AttentionArgs args;

 private:
  TrackingAllocator alloc_;
  MaterializedCase m_;
  Status status_;
};

}  // namespace tessera::verify
