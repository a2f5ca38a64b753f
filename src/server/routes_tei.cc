// TEI's other routes for an embedding model: POST /similarity, /embed_all
// and /decode; POST / and /invocations, which serve the model's default task.
#include <cmath>
#include <nlohmann/json.hpp>

#include "pipeline/model_kind.h"
#include "runtime/json_input.h"
#include "server/inputs.h"
#include "server/json_out.h"
#include "server/request_parse.h"
#include "server/routes.h"

namespace tessera::server {

namespace {

// Cosine similarity in double: rows are float, their norms need not be 1
// (TEI embeds without normalizing here). A zero row is similar to nothing.
float cosine(const float* a, const float* b, int dim) {
  double ab = 0, aa = 0, bb = 0;
  for (int i = 0; i < dim; ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  if (aa <= 0 || bb <= 0) return 0.0f;
  return static_cast<float>(ab / std::sqrt(aa * bb));
}

// Input 0 is the source sentence, input i the (i-1)th of the sentences.
std::string similarity_row_name(int64_t row) {
  if (row < 0) return "inputs";
  if (row == 0) return "inputs.source_sentence";
  return "inputs.sentences[" + std::to_string(row - 1) + "]";
}

}  // namespace

Reply handle_default_task(RouteContext& rc, std::string_view body) {
  // TEI's default routes by model type (router/src/http/server.rs).
  switch (pipeline::model_kind(rc.model)) {
    case ModelKind::kReranker:
      return handle_rerank(rc, body);
    case ModelKind::kClassifier:
      return handle_predict(rc, body);
    case ModelKind::kSparse:
      return handle_embed_sparse(rc, body);
    case ModelKind::kEmbedding:
      break;
  }
  nlohmann::json j;
  const bool similarity = json_input::parse(body, "body", &j).ok() && j.is_object() &&
                          j.contains("inputs") && j["inputs"].is_object();
  return similarity ? handle_similarity(rc, body) : handle_embed(rc, body);
}

Reply handle_similarity(RouteContext& rc, std::string_view body) {
  SimilarityRequest req;
  ApiError e = parse_similarity_request(body, parse_limits(rc), &req);
  if (e.ok()) e = needs_embedding_model(rc, "/similarity");
  Framing framing;
  if (e.ok()) e = tei_framing(rc, req.text, "parameters.prompt_name", &framing);
  PreparedInputs inputs;
  PreparedInputs sentences;
  if (e.ok()) {
    e = prepare_inputs(rc.model, {req.source}, framing, "inputs.source_sentence", kTeiTruncateHint,
                       &inputs);
  }
  if (e.ok()) {
    e = prepare_inputs(rc.model, req.sentences, framing, "inputs.sentences", kTeiTruncateHint,
                       &sentences);
  }
  // One job of n + 1 sequences: the source and the sentences batch together.
  for (auto& s : sentences.sequences) inputs.sequences.push_back(std::move(s));
  std::shared_ptr<EmbedJob> job;
  if (e.ok()) e = run_job(rc, inputs, similarity_row_name, &job);
  if (!e.ok()) return tei_error_reply(e);

  const int dim = rc.model.dim();
  std::vector<float> scores(req.sentences.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    scores[i] = cosine(job->rows(), job->rows() + (i + 1) * dim, dim);
  }
  Reply reply;
  append_float_row(scores.data(), static_cast<int64_t>(scores.size()), &reply.body);
  return reply;
}

Reply handle_embed_all(RouteContext& rc, std::string_view body) {
  EmbedAllRequest req;
  ApiError e = parse_embed_all_request(body, parse_limits(rc), &req);
  if (e.ok()) e = needs_embedding_model(rc, "/embed_all");
  Framing framing;
  if (e.ok()) e = tei_framing(rc, req.text, "prompt_name", &framing);
  PreparedInputs inputs;
  if (e.ok()) {
    e = prepare_inputs(rc.model, req.inputs, framing, "inputs", kTeiTruncateHint, &inputs);
  }
  std::vector<int64_t> lengths;
  for (const auto& s : inputs.sequences) lengths.push_back(static_cast<int64_t>(s.size()));
  std::shared_ptr<EmbedJob> job;
  if (e.ok()) e = run_job(rc, inputs, "inputs", &job, JobOutput::kTokenStates);
  if (!e.ok()) return tei_error_reply(e);

  // [[[f32 x dim] per token] per input]: sequence i's tokens follow i - 1's.
  // A 48 KB request can ask for 37 MB of text: capped and counted as it grows.
  const int dim = rc.model.token_dim();
  BoundedAnswer answer(rc.alloc, rc.options.max_response_bytes, "the /embed_all answer");
  std::string& out = answer.text();
  const float* row = job->rows();
  out.push_back('[');
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (i) out.push_back(',');
    out.push_back('[');
    for (int64_t t = 0; t < lengths[i]; ++t, row += dim) {
      if (t) out.push_back(',');
      append_float_row(row, dim, &out);
      if (!answer.fits()) return bounded_reply(answer);
    }
    out.push_back(']');
  }
  out.push_back(']');
  return bounded_reply(answer);
}

Reply handle_decode(RouteContext& rc, std::string_view body) {
  DecodeRequest req;
  ApiError e = parse_decode_request(body, parse_limits(rc), &req);
  if (!e.ok()) return tei_error_reply(e);
  nlohmann::json out = nlohmann::json::array();
  std::string text;
  for (size_t i = 0; i < req.ids.size(); ++i) {
    size_t bad = 0;
    const Status s = rc.model.decode(req.ids[i], req.skip_special_tokens, &text, &bad);
    if (!s.ok()) {
      const std::string list = req.batch ? "ids[" + std::to_string(i) + "]" : "ids";
      const std::string field = list + "[" + std::to_string(bad) + "]";
      return tei_error_reply({422, "Tokenizer", field, field + ": " + s.message()});
    }
    out.push_back(text);
  }
  return {200, json_text(out)};
}

}  // namespace tessera::server
