#include "model/heads/classifier.h"

#include <cmath>
#include <cstring>

#include "model/heads/head_memory.h"
#include "model/heads/pooling.h"
#include "model/kernels.h"
#include "runtime/gemm.h"
#include "tessera/allocator.h"

namespace tessera::model {

Status run_classifier(const ClassifierWeights& w, const NetworkConfig& c, const float* hidden,
                      const int32_t* cu_seqlens, int64_t count, Context& ctx, float* out) {
  if (count == 0) return Status::Ok();
  const int64_t h = c.hidden_size;
  const LinearEpilogue epilogue{w.dense_b, c.classifier.gelu, false};
  size_t gemm_bytes = 0;
  TESSERA_RETURN_IF_ERROR(
      linear_workspace_bytes(ctx.pool().num_threads(), count, w.dense_w, epilogue, &gemm_bytes));
  HeadMemory work;
  TESSERA_RETURN_IF_ERROR(
      allocate_head_memory(ctx, static_cast<size_t>(2 * count * h), gemm_bytes, &work));
  float* pooled = work.rows;
  float* dense = pooled + count * h;
  pool_sequences(c.classifier.mean_pooling ? Pooling::kMean : Pooling::kCls, hidden, h, cu_seqlens,
                 count, pooled);
  // dense + bias, and GELU in the epilogue where the head has it.
  TESSERA_RETURN_IF_ERROR(linear(ctx.pool(), count, pooled, w.dense_w, epilogue, dense,
                                 work.workspace, work.workspace_bytes));
  for (int64_t s = 0; s < count; ++s) {
    float* x = dense + s * h;
    if (!c.classifier.gelu) {
      for (int64_t i = 0; i < h; ++i) x[i] = std::tanh(x[i]);
    }
    if (w.norm_g != nullptr) layer_norm_row_to(x, x, w.norm_g, w.norm_b, c.layer_norm_eps, h);
    for (int label = 0; label < w.labels; ++label) {
      const float* row = w.out_w + static_cast<int64_t>(label) * h;
      double acc = w.out_b[label];
      for (int64_t i = 0; i < h; ++i) acc += static_cast<double>(row[i]) * x[i];
      out[s * w.labels + label] = static_cast<float>(acc);
    }
  }
  return Status::Ok();
}

}  // namespace tessera::model
