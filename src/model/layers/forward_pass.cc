#include "model/layers/forward_pass.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "model/kernels.h"
#include "model/stage_span.h"

namespace tessera::model {

void embed_tokens(const ForwardPass& f) {
  StageSpan span(f.ctx.profiler(), "model.embeddings", "T=" + std::to_string(f.batch.tokens));
  const NetworkConfig& c = f.config;
  const NetworkWeights& w = f.weights;
  const int64_t h = c.hidden_size;
  const int64_t offset = c.position_offset;
  const int32_t* cu = f.batch.cu_seqlens;
  float* hidden = f.scratch.hidden;
  for_row_blocks(f.ctx.pool(), f.batch.count, 4 * h * f.longest, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const std::vector<int32_t>& ids = f.ids[s];
      for (int64_t p = 0; p < static_cast<int64_t>(ids.size()); ++p) {
        float* row = hidden + (cu[s] + p) * h;
        const float* type_row = nullptr;
        if (w.token_type_embeddings != nullptr) {
          const int64_t type = f.type_ids != nullptr ? (*f.type_ids)[s][p] : 0;
          type_row = w.token_type_embeddings + type * h;
        }
        const float* word = w.word_embeddings + ids[p] * h;
        if (w.position_embeddings != nullptr) {
          sum3_row(row, word, w.position_embeddings + (p + offset) * h, type_row, h);
        } else if (type_row != nullptr) {
          sum3_row(row, word, type_row, nullptr, h);
        } else {
          std::memcpy(row, word, static_cast<size_t>(h) * sizeof(float));
        }
        if (w.embeddings_ln_gamma != nullptr) {
          norm_row(c, row, row, w.embeddings_ln_gamma, w.embeddings_ln_beta);
        }
      }
    }
  });
}

Status run_layers(const ForwardPass& f, LayerForward layer, const RotaryTables* rope) {
  for (int l = 0; l < f.config.num_hidden_layers; ++l) {
    LayerRun run;
    run.index = l;
    run.weights = &f.weights.layers[l];
    run.config = &f.config;
    run.batch = &f.batch;
    run.scratch = &f.scratch;
    if (rope != nullptr) run.rope = rope->of_layer(l);
    run.attention = &f.attention;
    run.ctx = &f.ctx;
    TESSERA_RETURN_IF_ERROR(layer(run));
  }
  return Status::Ok();
}

void run_final_norm(const ForwardPass& f) {
  LayerRun run;
  run.index = f.config.num_hidden_layers;
  run.config = &f.config;
  run.batch = &f.batch;
  run.ctx = &f.ctx;
  norm_rows(run, {"model.final_norm", ""}, f.scratch.hidden, f.scratch.hidden,
            f.weights.final_norm_gamma, f.weights.final_norm_beta);
}

Status run_rotary_stack(const ForwardPass& f, LayerForward layer) {
  RotaryTables rope;
  TESSERA_RETURN_IF_ERROR(rope.build(f));
  embed_tokens(f);
  TESSERA_RETURN_IF_ERROR(run_layers(f, layer, &rope));
  if (f.config.final_norm) run_final_norm(f);
  return Status::Ok();
}

Status RotaryTables::build(const ForwardPass& f) {
  const NetworkConfig& c = f.config;
  const int dim = c.rotary.dim;
  // Layers sharing a base and a factor share a table.
  std::vector<LayerAttention> distinct;
  table_of_.assign(c.num_hidden_layers, 0);
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    const LayerAttention a = c.attention_of(l);
    const auto same = [&a](const LayerAttention& r) {
      return r.rope_theta == a.rope_theta && r.rope_linear_factor == a.rope_linear_factor;
    };
    const auto it = std::find_if(distinct.begin(), distinct.end(), same);
    table_of_[l] = static_cast<size_t>(it - distinct.begin());
    if (it == distinct.end()) distinct.push_back(a);
  }
  const int64_t half = f.longest * (dim / 2);  // floats of cos (and of sin) per table
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(f.ctx.allocator(),
                                           distinct.size() * 2 * half * sizeof(float),
                                           "model.activations", &memory_));
  StageSpan span(f.ctx.profiler(), "model.rotary_tables",
                 "S=" + std::to_string(f.longest) + ",dim=" + std::to_string(dim));
  tables_.clear();
  for (size_t i = 0; i < distinct.size(); ++i) {
    float* cos = memory_.as<float>() + i * 2 * half;
    float* sin = cos + half;
    fill_rotary_table(dim, distinct[i], f.longest, cos, sin);
    tables_.push_back({cos, sin, dim});
  }
  return Status::Ok();
}

}  // namespace tessera::model
