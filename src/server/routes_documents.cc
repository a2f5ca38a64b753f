// POST /embed_documents: what `tessera embed` writes for the same texts —
// chunk rows {"id", "chunk", "offsets", "embedding"} (or, with
// doc_embedding, document rows {"id", "chunks", "offsets", "embedding"}) —
// as one JSON array. Windows, framing and the document mean are the
// pipeline's own functions; only the batching is the server's.
#include <nlohmann/json.hpp>

#include "pipeline/embedding_writer.h"
#include "pipeline/pipeline.h"
#include "pipeline/utf8_text.h"
#include "pipeline/windowing.h"
#include "server/embedding_rows.h"
#include "server/json_out.h"
#include "server/request_budget.h"
#include "server/request_parse.h"
#include "server/routes.h"

namespace tessera::server {

namespace {

// One document's chunks: where its rows start in the job and their offsets.
// (The implicit noexcept move runs nlohmann::json's noexcept move, whose
// invariant check clang-tidy 14 cannot prove non-throwing.)
struct PlannedDocument {  // NOLINT(bugprone-exception-escape)
  nlohmann::json id;
  size_t first = 0;
  std::vector<std::pair<int64_t, int64_t>> offsets;  // code points
};

ApiError plan_documents(RouteContext& rc, const DocumentsRequest& req,
                        std::vector<PlannedDocument>* docs, PreparedInputs* inputs) {
  // The windows of `tessera embed` with its defaults (the model's
  // max_seq_length, stride 32 or a quarter of the window).
  pipeline::PipelineOptions defaults;
  ApiError e = resolve_prompt_text(rc.model, req.prompt_name, "prompt_name", &defaults.prompt);
  if (!e.ok()) return e;
  if (Status s = pipeline::resolve_options(rc.model, &defaults); !s.ok()) {
    // Only the prompt is the request's: a prompt as long as the window.
    if (!defaults.prompt.empty()) return validation_error("prompt_name", s.message());
    return {500, "Backend", "", "the model's window: " + s.message()};
  }
  std::vector<model::TokenSpan> tokens;
  RequestBudget* budget = current_request_budget();
  for (size_t d = 0; d < req.texts.size(); ++d) {
    const std::string name = "documents[" + std::to_string(d) + "]";
    const std::string& text = req.texts[d];
    Status s = rc.model.tokenize(text, &tokens, budget);
    if (!s.ok() && budget != nullptr && budget->stopped()) return budget->refusal();
    if (!s.ok()) {
      return validation_error(name, name + ": the tokenizer refused this text: " + s.message());
    }
    if (tokens.empty()) {
      return validation_error(name, name + ": " + pipeline::empty_document_problem(text));
    }
    PlannedDocument pd;
    pd.id = nlohmann::json::parse(req.ids[d]);
    pd.first = inputs->sequences.size();
    const pipeline::CodePointIndex cp(text);
    for (const pipeline::Window& w : pipeline::plan_windows(tokens, text, defaults.window)) {
      inputs->sequences.emplace_back();
      // defaults.frame: the model's specials with the prompt's ids after its prefix.
      pipeline::frame_window(tokens, w, defaults.frame, &inputs->sequences.back());
      inputs->tokens += static_cast<int64_t>(inputs->sequences.back().size());
      pd.offsets.push_back(pipeline::window_code_points(tokens, w, cp));
    }
    docs->push_back(std::move(pd));
  }
  return no_error();
}

}  // namespace

Reply handle_embed_documents(RouteContext& rc, std::string_view body) {
  DocumentsRequest req;
  ApiError e = parse_documents_request(body, parse_limits(rc), &req);
  if (e.ok()) e = needs_embedding_model(rc, "/embed_documents");
  RowShape shape;
  if (e.ok()) {
    e = resolve_row_shape(rc, req.dimensions, "dimensions", rc.model.normalized(), &shape);
  }
  std::vector<PlannedDocument> docs;
  PreparedInputs inputs;
  if (e.ok()) e = plan_documents(rc, req, &docs, &inputs);
  std::shared_ptr<EmbedJob> job;
  if (e.ok()) e = run_job(rc, inputs, "documents", &job);
  if (!e.ok()) return tei_error_reply(e);
  // The rows `tessera embed --dimensions` writes: the first dims values,
  // re-normalised when the model normalises; a document's mean is of those.
  shape_rows(rc, *job, shape);

  // A 2 MB document is thousands of rows: capped and counted as it grows.
  const int dim = shape.dims;
  std::vector<float> mean(dim);
  BoundedAnswer answer(rc.alloc, rc.options.max_response_bytes, "the /embed_documents answer");
  std::string& out = answer.text();
  out.push_back('[');
  auto add = [&](const pipeline::OutputRow& row, const float* v) {
    if (out.size() > 1) out.push_back(',');
    out += pipeline::format_row(row, v, dim);
    return answer.fits();
  };
  for (const PlannedDocument& pd : docs) {
    const float* rows = job->rows() + pd.first * dim;
    const auto n = static_cast<int64_t>(pd.offsets.size());
    if (req.doc_embedding) {
      pipeline::mean_of_rows(rows, n, dim, rc.model.normalized(), mean.data());
      if (!add({&pd.id, 0, n, pd.offsets.front().first, pd.offsets.back().second}, mean.data())) {
        return bounded_reply(answer);
      }
      continue;
    }
    for (int64_t k = 0; k < n; ++k) {
      if (!add({&pd.id, k, 0, pd.offsets[k].first, pd.offsets[k].second}, rows + k * dim)) {
        return bounded_reply(answer);
      }
    }
  }
  out.push_back(']');
  return bounded_reply(answer);
}

}  // namespace tessera::server
