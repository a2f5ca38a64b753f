#include "server/encoder_model.h"

#include <filesystem>

namespace tessera::server {

namespace {

// "models/all-MiniLM-L6-v2/" -> "all-MiniLM-L6-v2".
std::string model_id(const std::string& dir) {
  std::filesystem::path p(dir);
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

}  // namespace

EncoderServedModel::EncoderServedModel(std::unique_ptr<model::Encoder> encoder,
                                       Dispatcher& attention, Context& ctx)
    : encoder_(std::move(encoder)), attention_(attention), ctx_(ctx) {
  info_.id = model_id(encoder_->model_dir());
  info_.dir = encoder_->model_dir();
  info_.dim = encoder_->dim();
  info_.max_length = encoder_->max_seq_length();
  info_.normalizes = encoder_->config().normalize;
  info_.pooling = model::pooling_name(encoder_->config().pooling);
  info_.weight_bytes = encoder_->weight_bytes();
  info_.weights = model::weight_precision_name(encoder_->weight_precision());
}

Status EncoderServedModel::tokenize(std::string_view text, std::vector<TextToken>* out) const {
  std::vector<model::TokenSpan> spans;
  TESSERA_RETURN_IF_ERROR(encoder_->tokenizer().tokenize(text, &spans));
  out->clear();
  out->reserve(spans.size());
  for (const model::TokenSpan& s : spans) out->push_back({s.id, s.begin, s.end});
  return Status::Ok();
}

std::string EncoderServedModel::special_text(int32_t id) const {
  if (id == cls_id()) return "[CLS]";
  if (id == sep_id()) return "[SEP]";
  return "[UNK]";
}

Status EncoderServedModel::embed(const std::vector<std::vector<int32_t>>& sequences, float* out) {
  return encoder_->embed(sequences, attention_, ctx_, out);
}

}  // namespace tessera::server
