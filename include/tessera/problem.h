// AttentionProblem: AttentionArgs validated once, with the sizes derived from
// them. make() is the only way to build one, so holding a problem is proof
// that validate() passed: the dispatcher validates each call once and every
// backend receives the problem instead of validating again. Immutable; it
// borrows the args' tensors (and cu_seqlens), which must outlive it.
#pragma once

#include <optional>

#include "tessera/attention.h"

namespace tessera {

class AttentionProblem {
 public:
  // Validates `args` (see validate()); on error `out` is left empty.
  static Status make(const AttentionArgs& args, std::optional<AttentionProblem>* out);

  const AttentionArgs& args() const { return args_; }
  const AttentionDims& dims() const { return dims_; }
  DType dtype() const { return args_.q.dtype; }
  Device device() const { return args_.q.device; }
  float scale() const { return scale_; }  // args.effective_scale()

 private:
  explicit AttentionProblem(const AttentionArgs& args);
  AttentionArgs args_;
  AttentionDims dims_;
  float scale_;
};

}  // namespace tessera
