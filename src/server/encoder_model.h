// ServedModel over the real model::Encoder: its tokenizer for the routes, its
// embed() (attention through the Dispatcher) for the batcher.
#pragma once

#include <memory>
#include <string>

#include "model/encoder.h"
#include "server/served_model.h"
#include "tessera/context.h"
#include "tessera/dispatcher.h"

namespace tessera::server {

class EncoderServedModel final : public ServedModel {
 public:
  // `attention` and `ctx` must outlive this; embed() runs on ctx's threads.
  EncoderServedModel(std::unique_ptr<model::Encoder> encoder, Dispatcher& attention, Context& ctx);

  const ModelInfo& info() const override { return info_; }
  int dim() const override { return info_.dim; }
  Status tokenize(std::string_view text, std::vector<TextToken>* out) const override;
  int32_t cls_id() const override { return encoder_->tokenizer().cls_id(); }
  int32_t sep_id() const override { return encoder_->tokenizer().sep_id(); }
  std::string special_text(int32_t id) const override;
  Status embed(const std::vector<std::vector<int32_t>>& sequences, float* out) override;

 private:
  std::unique_ptr<model::Encoder> encoder_;
  Dispatcher& attention_;
  Context& ctx_;
  ModelInfo info_;
};

}  // namespace tessera::server
