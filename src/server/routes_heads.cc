// TEI's routes for models with a head: POST /rerank and /predict
// (cross-encoders and classifiers: raw logits, or TEI's sigmoid / softmax),
// POST /embed_sparse (SPLADE), and the 424 any route gives a model of
// another kind. Inputs are framed by the pipeline (pipeline/text_scoring.h)
// and run through the shared batcher, so their sequences batch fairly with
// every other request's.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "pipeline/model_kind.h"
#include "server/inputs.h"
#include "server/json_out.h"
#include "server/request_parse_heads.h"
#include "server/routes.h"

namespace tessera::server {

namespace {

// TEI's activation when raw_scores is false (core/src/infer.rs): a sigmoid
// for one label, a softmax over several.
void tei_activation(float* scores, int n) {
  if (n == 1) {
    scores[0] = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(scores[0]))));
    return;
  }
  const float max = *std::max_element(scores, scores + n);
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += std::exp(static_cast<double>(scores[i]) - max);
  for (int i = 0; i < n; ++i) {
    scores[i] = static_cast<float>(std::exp(static_cast<double>(scores[i]) - max) / sum);
  }
}

// Indices of scores[0, n) by descending score; ties keep input order.
std::vector<int64_t> ranked(const float* scores, int64_t n, int64_t stride) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return scores[a * stride] > scores[b * stride];
  });
  return order;
}

void append_float(float v, std::string* out) {
  std::string row;
  append_float_row(&v, 1, &row);
  out->append(row, 1, row.size() - 2);  // without the brackets
}

}  // namespace

ApiError needs_model_kind(const RouteContext& rc, ModelKind a, ModelKind b,
                          const char* tei_message, const char* route) {
  const ModelKind kind = pipeline::model_kind(rc.model);
  if (kind == a || kind == b) return no_error();
  return {424, "Backend", "",
          std::string("Backend error: ") + tei_message + " (" + route + ": model '" +
              rc.model_info.id + "' is " + pipeline::describe_kind(rc.model) + ")"};
}

ApiError needs_embedding_model(const RouteContext& rc, const char* route) {
  return needs_model_kind(rc, ModelKind::kEmbedding, ModelKind::kEmbedding,
                          "Model is not an embedding model", route);
}

Reply handle_rerank(RouteContext& rc, std::string_view body) {
  RerankRequest req;
  ApiError e = parse_rerank_request(body, parse_limits(rc), &req);
  if (e.ok()) {
    e = needs_model_kind(rc, ModelKind::kReranker, ModelKind::kReranker,
                         "model is not a re-ranker model", "/rerank");
  }
  std::vector<pipeline::ScoreInput> pairs;
  pairs.reserve(req.texts.size());
  for (const std::string& t : req.texts) pairs.push_back({req.query, t});
  PreparedInputs inputs;
  if (e.ok()) e = prepare_score_inputs(rc.model, pairs, req.truncate, "texts", kTeiTruncateHint, &inputs);
  std::shared_ptr<EmbedJob> job;
  if (e.ok()) e = run_job(rc, inputs, "texts", &job, JobOutput::kScores);
  if (!e.ok()) return tei_error_reply(e);

  float* scores = job->rows();  // one label: one score per text
  if (!req.raw_scores) {
    for (int64_t i = 0; i < job->count(); ++i) tei_activation(scores + i, 1);
  }
  // [{"index", "text"?, "score"}] best first; return_text can make it large.
  BoundedAnswer answer(rc.alloc, rc.options.max_response_bytes, "the /rerank answer");
  std::string& out = answer.text();
  out.push_back('[');
  bool first = true;
  for (int64_t i : ranked(scores, job->count(), 1)) {
    out += first ? "{\"index\":" : ",{\"index\":";
    first = false;
    out += std::to_string(i);
    if (req.return_text) out += ",\"text\":" + json_text(req.texts[i]);
    out += ",\"score\":";
    append_float(scores[i], &out);
    out.push_back('}');
    if (!answer.fits()) return bounded_reply(answer);
  }
  out.push_back(']');
  return bounded_reply(answer);
}

Reply handle_predict(RouteContext& rc, std::string_view body) {
  PredictRequest req;
  ApiError e = parse_predict_request(body, parse_limits(rc), &req);
  if (e.ok()) {
    e = needs_model_kind(rc, ModelKind::kClassifier, ModelKind::kReranker,
                         "Model is not a classifier model", "/predict");
  }
  PreparedInputs inputs;
  if (e.ok()) {
    e = prepare_score_inputs(rc.model, req.inputs, req.truncate, "inputs", kTeiTruncateHint,
                             &inputs);
  }
  std::shared_ptr<EmbedJob> job;
  if (e.ok()) e = run_job(rc, inputs, "inputs", &job, JobOutput::kScores);
  if (!e.ok()) return tei_error_reply(e);

  // Per input [{"score", "label"}] best first; a batch is a list of those.
  const std::vector<std::string>& labels = rc.model.labels();
  const int n = static_cast<int>(labels.size());
  std::string out;
  if (req.batch) out.push_back('[');
  for (int64_t i = 0; i < job->count(); ++i) {
    float* row = job->rows() + i * n;
    if (!req.raw_scores) tei_activation(row, n);
    out += i ? ",[" : "[";
    bool first = true;
    for (int64_t k : ranked(row, n, 1)) {
      out += first ? "{\"score\":" : ",{\"score\":";
      first = false;
      append_float(row[k], &out);
      out += ",\"label\":" + json_text(labels[k]) + "}";
    }
    out.push_back(']');
  }
  if (req.batch) out.push_back(']');
  return {200, std::move(out)};
}

Reply handle_embed_sparse(RouteContext& rc, std::string_view body) {
  EmbedSparseRequest req;
  ApiError e = parse_embed_sparse_request(body, parse_limits(rc), &req);
  if (e.ok()) {
    e = needs_model_kind(rc, ModelKind::kSparse, ModelKind::kSparse,
                         "Model is not an embedding model with SPLADE pooling", "/embed_sparse");
  }
  PreparedInputs inputs;
  if (e.ok()) {
    e = prepare_inputs(rc.model, req.inputs, req.truncate, "inputs", kTeiTruncateHint, &inputs);
  }
  std::shared_ptr<EmbedJob> job;
  if (e.ok()) e = run_job(rc, inputs, "inputs", &job, JobOutput::kSparse);
  if (!e.ok()) return tei_error_reply(e);

  // [[{"index", "value"}] per input]: the nonzeros by index (TEI's sparsify).
  const int64_t width = job->width();
  BoundedAnswer answer(rc.alloc, rc.options.max_response_bytes, "the /embed_sparse answer");
  std::string& out = answer.text();
  std::vector<int32_t> indices;
  std::vector<float> values;
  out.push_back('[');
  for (int64_t i = 0; i < job->count(); ++i) {
    pipeline::sparsify(job->rows() + i * width, width, &indices, &values);
    out += i ? ",[" : "[";
    for (size_t k = 0; k < indices.size(); ++k) {
      out += k ? ",{\"index\":" : "{\"index\":";
      out += std::to_string(indices[k]) + ",\"value\":";
      append_float(values[k], &out);
      out.push_back('}');
    }
    out.push_back(']');
    if (!answer.fits()) return bounded_reply(answer);
  }
  out.push_back(']');
  return bounded_reply(answer);
}

}  // namespace tessera::server
