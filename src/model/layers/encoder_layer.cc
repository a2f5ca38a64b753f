#include "model/layers/encoder_layer.h"

namespace tessera::model {

Status run_post_norm_layer(const LayerRun& run) {
  const LayerWeights& w = *run.weights;
  float* hidden = run.scratch->hidden;
  TESSERA_RETURN_IF_ERROR(run_attention_part(run, hidden));
  norm_rows(run, run.stage("attn_norm"), hidden, hidden, w.ln1_gamma, w.ln1_beta);
  TESSERA_RETURN_IF_ERROR(run_ffn_part(run, hidden));
  norm_rows(run, run.stage("ffn_norm"), hidden, hidden, w.ln2_gamma, w.ln2_beta);
  return Status::Ok();
}

}  // namespace tessera::model
