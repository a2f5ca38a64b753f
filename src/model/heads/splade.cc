#include "model/heads/splade.h"

#include <algorithm>
#include <cmath>

#include "model/heads/head_memory.h"
#include "model/kernels.h"
#include "runtime/gemm.h"
#include "tessera/allocator.h"

namespace tessera::model {

namespace {
// Rows per block: 64 x a 30k vocabulary is 8 MB of logits.
constexpr int64_t kBlockRows = 64;
}  // namespace

Status run_splade(const MaskedLmWeights& w, const NetworkConfig& c, const float* hidden,
                  const int32_t* cu_seqlens, int64_t count, Context& ctx, float* out) {
  const int64_t h = c.hidden_size, vocab = c.vocab_size;
  std::fill(out, out + count * vocab, 0.0f);  // log(1 + relu(x)) >= 0
  if (count == 0) return Status::Ok();
  const int64_t tokens = cu_seqlens[count];
  const int64_t block = std::min(kBlockRows, tokens);
  const LinearEpilogue transform_epilogue{w.transform_b, true, false};  // gelu (hidden_act)
  const LinearEpilogue decoder_epilogue{w.decoder_b, false, false};
  size_t bytes_transform = 0, bytes_decoder = 0;
  const int threads = ctx.pool().num_threads();
  TESSERA_RETURN_IF_ERROR(
      linear_workspace_bytes(threads, block, w.transform_w, transform_epilogue, &bytes_transform));
  TESSERA_RETURN_IF_ERROR(
      linear_workspace_bytes(threads, block, w.decoder_w, decoder_epilogue, &bytes_decoder));
  const size_t gemm_bytes = std::max(bytes_transform, bytes_decoder);
  HeadMemory work;
  TESSERA_RETURN_IF_ERROR(
      allocate_head_memory(ctx, static_cast<size_t>(block * (h + vocab)), gemm_bytes, &work));
  float* transformed = work.rows;
  float* logits = transformed + block * h;
  void* gemm_work = work.workspace;

  int64_t seq = 0;
  for (int64_t r0 = 0; r0 < tokens; r0 += block) {
    const int64_t rows = std::min(block, tokens - r0);
    TESSERA_RETURN_IF_ERROR(linear(ctx.pool(), rows, hidden + r0 * h, w.transform_w,
                                   transform_epilogue, transformed, gemm_work, gemm_bytes));
    for (int64_t r = 0; r < rows; ++r) {
      layer_norm_row(transformed + r * h, w.norm_gamma, w.norm_beta, c.layer_norm_eps, h);
    }
    TESSERA_RETURN_IF_ERROR(linear(ctx.pool(), rows, transformed, w.decoder_w, decoder_epilogue,
                                   logits, gemm_work, gemm_bytes));
    for (int64_t r = 0; r < rows; ++r) {
      while (r0 + r >= cu_seqlens[seq + 1]) ++seq;
      splade_max_row(out + seq * vocab, logits + r * vocab, vocab);
    }
  }
  return Status::Ok();
}

}  // namespace tessera::model
