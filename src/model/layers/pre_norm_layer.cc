#include "model/layers/pre_norm_layer.h"

namespace tessera::model {

Status run_pre_norm_layer(const LayerRun& run) {
  const LayerWeights& w = *run.weights;
  const LayerScratch& s = *run.scratch;
  const float* attention_input = s.hidden;
  if (w.ln1_gamma != nullptr) {
    norm_rows(run, run.stage("attn_norm"), s.hidden, s.normed, w.ln1_gamma, w.ln1_beta);
    attention_input = s.normed;
  }
  TESSERA_RETURN_IF_ERROR(run_attention_part(run, attention_input));
  norm_rows(run, run.stage("ffn_norm"), s.hidden, s.normed, w.ln2_gamma, w.ln2_beta);
  return run_ffn_part(run, s.normed);
}

}  // namespace tessera::model
