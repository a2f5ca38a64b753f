// tessera::Embedder (include/tessera/embedder.h) over the pipeline: texts go
// through pipeline::embed_texts, documents through run_pipeline, the very
// code `tessera embed` runs, with an in-memory reader and writer.
#include "tessera/embedder.h"

#include <nlohmann/json.hpp>

#include "api/environment.h"
#include "pipeline/document_reader.h"
#include "pipeline/embedding_output.h"
#include "pipeline/embedding_writer.h"
#include "pipeline/encoder_model.h"
#include "pipeline/model_kind.h"
#include "pipeline/model_location.h"
#include "pipeline/pipeline.h"
#include "pipeline/prompts.h"
#include "pipeline/text_embedding.h"
#include "pipeline/text_scoring.h"

namespace tessera {

namespace {

// Collects the pipeline's chunk rows into EmbeddedDocuments. Document ids
// are the indices DocumentReader::from_texts gave.
class CollectingWriter final : public pipeline::EmbeddingWriter {
 public:
  CollectingWriter(int dim, std::vector<EmbeddedDocument>* docs) : dim_(dim), docs_(*docs) {}

  Status write(const pipeline::OutputRow& row, const float* embedding) override {
    const auto doc = row.id->get<int64_t>();
    if (doc < 0 || doc >= static_cast<int64_t>(docs_.size()) || row.chunks > 0) {
      return internal_error("the pipeline wrote an unexpected row for document " + row.id->dump());
    }
    docs_[doc].chunks.push_back({row.begin, row.end, {embedding, embedding + dim_}});
    return Status::Ok();
  }
  Status finish() override { return Status::Ok(); }

 private:
  const int dim_;
  std::vector<EmbeddedDocument>& docs_;
};

}  // namespace

struct Embedder::Impl {
  Runtime& runtime;
  std::string dir;
  std::unique_ptr<pipeline::EncoderModel> model;
  pipeline::PipelineOptions pipeline;
};

Status Embedder::load(Runtime& runtime, const EmbedderOptions& options,
                      std::unique_ptr<Embedder>* out) {
  auto impl = std::unique_ptr<Impl>(new Impl{runtime, "", nullptr, {}});
  std::unique_ptr<model::Encoder> encoder;
  model::WeightPrecision weights{};
  TESSERA_RETURN_IF_ERROR(api::weights_or_environment(options.weights, &weights));
  TESSERA_RETURN_IF_ERROR(pipeline::load_encoder(
      api::model_search(), options.model_dir, weights,
      "or set EmbedderOptions.model_dir (a model directory or a registered model's name) or "
      "$TESSERA_MODEL",
      runtime.context(), &impl->dir, &encoder));
  impl->model = std::make_unique<pipeline::EncoderModel>(std::move(encoder), runtime.dispatcher());
  impl->pipeline.window = {options.max_tokens, options.stride};
  impl->pipeline.batch_tokens = options.batch_tokens;
  TESSERA_RETURN_IF_ERROR(pipeline::resolve_options(*impl->model, &impl->pipeline));
  out->reset(new Embedder(std::move(impl)));
  return Status::Ok();
}

Status resolve_model_dir(const std::string& model, std::string* dir) {
  return pipeline::resolve_model_dir(api::model_search(), model, "", dir);
}

std::string model_data_dir() { return api::model_search().data_dir; }

Embedder::Embedder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Embedder::~Embedder() = default;

int Embedder::dim() const { return impl_->model->dim(); }
int Embedder::max_tokens() const { return impl_->model->max_seq_length(); }
bool Embedder::normalized() const { return impl_->model->normalized(); }
const std::string& Embedder::model_dir() const { return impl_->dir; }
ModelKind Embedder::kind() const { return pipeline::model_kind(*impl_->model); }
const std::vector<std::string>& Embedder::labels() const { return impl_->model->labels(); }
const std::map<std::string, std::string>& Embedder::prompts() const {
  return impl_->model->prompts().by_name;
}
const std::string& Embedder::default_prompt_name() const {
  return impl_->model->prompts().default_name;
}

namespace {

pipeline::TextOptions text_options(bool truncate, int64_t batch_tokens) {
  pipeline::TextOptions options;
  options.truncate = truncate;
  options.batch_tokens = batch_tokens;
  return options;
}

Status require_embedding(const pipeline::EmbeddingModel& model, const char* what) {
  return pipeline::require_kind(model, ModelKind::kEmbedding, what, "an embedding model");
}

}  // namespace

Status Embedder::embed(const std::vector<std::string>& texts, bool truncate,
                       std::vector<float>* out) {
  EmbedOptions options;
  options.truncate = truncate;
  return embed(texts, options, out);
}

namespace {

// The prompt text and the row width `options` ask for, checked.
Status shape_of(const pipeline::EmbeddingModel& model, const EmbedOptions& options,
                std::string* prompt, int* dims) {
  TESSERA_RETURN_IF_ERROR(pipeline::resolve_prompt(
      model.prompts(), {options.prompt_name, options.prompt}, "prompt_name", prompt));
  *dims = options.dimensions == 0 ? model.dim() : options.dimensions;
  return pipeline::check_dimensions(*dims, model.dim(), "dimensions");
}

}  // namespace

Status Embedder::embed(const std::vector<std::string>& texts, const EmbedOptions& options,
                       std::vector<float>* out) {
  TESSERA_RETURN_IF_ERROR(require_embedding(*impl_->model, "embed"));
  pipeline::TextOptions text = text_options(options.truncate, impl_->pipeline.batch_tokens);
  text.truncate_left = options.truncate_left;
  int dims = 0;
  TESSERA_RETURN_IF_ERROR(shape_of(*impl_->model, options, &text.prompt, &dims));
  std::vector<float> rows(texts.size() * static_cast<size_t>(dim()));
  TESSERA_RETURN_IF_ERROR(
      pipeline::embed_texts(*impl_->model, texts, text, impl_->runtime.context(), rows.data()));
  pipeline::shorten_rows(rows.data(), static_cast<int64_t>(texts.size()), dim(), dims,
                         dims != dim() && normalized());
  rows.resize(texts.size() * static_cast<size_t>(dims));
  *out = std::move(rows);
  return Status::Ok();
}

Status Embedder::embed_documents(const std::vector<std::string>& documents, bool doc_embedding,
                                 std::vector<EmbeddedDocument>* out) {
  return embed_documents(documents, doc_embedding, EmbedOptions{}, out);
}

Status Embedder::embed_documents(const std::vector<std::string>& documents, bool doc_embedding,
                                 const EmbedOptions& options, std::vector<EmbeddedDocument>* out) {
  TESSERA_RETURN_IF_ERROR(require_embedding(*impl_->model, "embed_documents"));
  pipeline::PipelineOptions run = impl_->pipeline;
  int dims = 0;
  TESSERA_RETURN_IF_ERROR(shape_of(*impl_->model, options, &run.prompt, &dims));
  run.dimensions = dims;
  TESSERA_RETURN_IF_ERROR(pipeline::resolve_options(*impl_->model, &run));
  std::vector<EmbeddedDocument> docs(documents.size());
  auto reader = pipeline::DocumentReader::from_texts(documents);
  CollectingWriter writer(dims, &docs);
  pipeline::PipelineCallbacks callbacks;
  callbacks.on_problem = [&docs](const pipeline::Problem& p) {
    // DocumentReader::from_texts ids each document by its index.
    const int64_t i = p.id.is_number_integer() ? p.id.get<int64_t>() : -1;
    if (i >= 0 && i < static_cast<int64_t>(docs.size())) docs[i].problem = p.message;
  };
  pipeline::PipelineStats stats;
  TESSERA_RETURN_IF_ERROR(pipeline::run_pipeline(*reader, *impl_->model, run, writer,
                                                 impl_->runtime.context(), callbacks, &stats));
  if (doc_embedding) {
    // The mean of the chunk rows as returned (shortened), as the pipeline's
    // own --doc-embedding row.
    for (EmbeddedDocument& d : docs) {
      if (d.chunks.empty()) continue;
      std::vector<float> rows;
      rows.reserve(d.chunks.size() * dims);
      for (const EmbeddedChunk& c : d.chunks) {
        rows.insert(rows.end(), c.embedding.begin(), c.embedding.end());
      }
      d.embedding.resize(dims);
      pipeline::mean_of_rows(rows.data(), static_cast<int64_t>(d.chunks.size()), dims, normalized(),
                             d.embedding.data());
    }
  }
  *out = std::move(docs);
  return Status::Ok();
}

Status Embedder::score(const std::vector<ScoreInput>& inputs, bool truncate,
                       std::vector<float>* out) {
  std::vector<pipeline::ScoreInput> in;
  in.reserve(inputs.size());
  for (const ScoreInput& i : inputs) in.push_back({i.text, i.pair});
  pipeline::TextOptions options = text_options(truncate, impl_->pipeline.batch_tokens);
  options.field = "inputs";
  options.truncate_hint = "ask for truncation to cut it";
  std::vector<float> scores(inputs.size() * labels().size());
  TESSERA_RETURN_IF_ERROR(
      pipeline::score_inputs(*impl_->model, in, options, impl_->runtime.context(), scores.data()));
  *out = std::move(scores);
  return Status::Ok();
}

Status Embedder::score(const std::string& query, const std::vector<std::string>& texts,
                       bool truncate, std::vector<float>* out) {
  std::vector<ScoreInput> pairs;
  pairs.reserve(texts.size());
  for (const std::string& t : texts) pairs.push_back({query, t});
  return score(pairs, truncate, out);
}

Status Embedder::embed_sparse(const std::vector<std::string>& texts, bool truncate,
                              std::vector<SparseVector>* out) {
  std::vector<SparseVector> rows(texts.size());
  const int64_t width = impl_->model->sparse_dim();
  TESSERA_RETURN_IF_ERROR(pipeline::embed_sparse_texts(
      *impl_->model, texts, text_options(truncate, impl_->pipeline.batch_tokens),
      impl_->runtime.context(), [&](int64_t i, const float* row) {
        pipeline::sparsify(row, width, &rows[i].indices, &rows[i].values);
      }));
  *out = std::move(rows);
  return Status::Ok();
}

}  // namespace tessera
