// A head's working memory in one tracked block ("model.activations"): its
// f32 rows, then a GEMM workspace aligned after them. Shared by the
// classifier, SPLADE and Dense heads.
#pragma once

#include <cstddef>

#include "tessera/allocator.h"
#include "tessera/context.h"
#include "tessera/status.h"

namespace tessera::model {

struct HeadMemory {
  Buffer block;
  float* rows = nullptr;      // `floats` values
  void* workspace = nullptr;  // `workspace_bytes`, for linear()
  size_t workspace_bytes = 0;
};

inline Status allocate_head_memory(Context& ctx, size_t floats, size_t workspace_bytes,
                                   HeadMemory* out) {
  constexpr size_t kAlign = TrackingAllocator::kAlignment;
  const size_t rows_bytes = (floats * sizeof(float) + kAlign - 1) / kAlign * kAlign;
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(ctx.allocator(), rows_bytes + workspace_bytes,
                                           "model.activations", &out->block));
  out->rows = out->block.as<float>();
  out->workspace = out->block.as<char>() + rows_bytes;
  out->workspace_bytes = workspace_bytes;
  return Status::Ok();
}

}  // namespace tessera::model
