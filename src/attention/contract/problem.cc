#include "tessera/problem.h"

namespace tessera {

AttentionProblem::AttentionProblem(const AttentionArgs& args)
    : args_(args), dims_(dims_of(args)), scale_(args.effective_scale()) {}

Status AttentionProblem::make(const AttentionArgs& args, std::optional<AttentionProblem>* out) {
  out->reset();
  TESSERA_RETURN_IF_ERROR(validate(args));
  out->emplace(AttentionProblem(args));
  return Status::Ok();
}

}  // namespace tessera
