// POST /embed (TEI), and what every embedding route shares: the batcher's
// answer (run_job), TEI's error replies and framing.
#include "pipeline/embedding_output.h"
#include "server/embedding_rows.h"
#include "server/inputs.h"
#include "server/json_out.h"
#include "server/request_budget.h"
#include "server/request_parse.h"
#include "server/routes.h"

namespace tessera::server {

namespace {

using ErrorBody = std::string (*)(const ApiError&);

Reply error_reply(const ApiError& e, ErrorBody body) {
  return {e.status, body(e), "application/json", e.retry_after_seconds};
}

// What a client should wait before retrying an overloaded server: admitted
// requests are answered within about a second on a busy server.
constexpr int kRetryAfterSeconds = 1;

// OpenAI's and Cohere's APIs answer a request they refuse with 400
// (openai.BadRequestError): TEI's 422, and a route's 413 (too many inputs,
// an answer over --max-response-bytes), become 400 there.
ApiError as_bad_request(ApiError e) {
  if (e.status == 422 || e.status == 413) e.status = 400;
  return e;
}

}  // namespace

Reply openai_error_reply(const ApiError& e) {
  return error_reply(as_bad_request(e), openai_error_body);
}

Reply cohere_error_reply(const ApiError& e) {
  return error_reply(as_bad_request(e), cohere_error_body);
}

ParseLimits parse_limits(const RouteContext& rc) {
  return {rc.options.max_client_batch_size, rc.options.auto_truncate};
}

ApiError tei_framing(const RouteContext& rc, const TextRequestOptions& text,
                     const std::string& prompt_field, Framing* out) {
  out->truncate = text.truncate;
  out->truncate_left = text.truncate_left;
  return resolve_prompt_text(rc.model, text.prompt_name, prompt_field, &out->prompt);
}

Reply tei_error_reply(const ApiError& e) { return error_reply(e, tei_error_body); }

Reply bounded_reply(BoundedAnswer& answer) {
  if (!answer.fits()) return tei_error_reply(answer.error());
  Reply reply;
  reply.body = answer.take_text();
  reply.memory = answer.take_reservation();
  return reply;
}

ApiError run_job(RouteContext& rc, PreparedInputs& inputs, const std::string& field,
                 std::shared_ptr<EmbedJob>* job, JobOutput output) {
  const RowName row_name = [&field](int64_t row) {
    return row < 0 ? field : field + "[" + std::to_string(row) + "]";
  };
  return run_job(rc, inputs, row_name, job, output);
}

ApiError run_job(RouteContext& rc, PreparedInputs& inputs, const RowName& row_name,
                 std::shared_ptr<EmbedJob>* job, JobOutput output) {
  const std::string field = row_name(-1);
  Status s =
      rc.batcher.submit(std::move(inputs.sequences), job, output, std::move(inputs.type_ids));
  if (s.code() == StatusCode::kResourceExhausted) {
    return {429, "Overloaded", "", "overloaded: " + s.message(), kRetryAfterSeconds};
  }
  if (s.code() == StatusCode::kUnavailable) return {503, "Unhealthy", "", s.message()};
  if (!s.ok()) return validation_error(field, s.message());
  // A client that has gone will not read the answer, and a stopping server
  // past its drain deadline will not wait for it: its sequences not yet run
  // are dropped (a 2 MB document would otherwise run to its end).
  constexpr std::chrono::milliseconds kClientCheck(100);
  RequestBudget* budget = current_request_budget();
  while (!(*job)->ready_within(kClientCheck)) {
    if (budget != nullptr && budget->should_stop()) rc.batcher.cancel(**job);
  }
  s = (*job)->wait();
  if (!s.ok() && budget != nullptr && budget->should_stop()) return budget->refusal();
  if (s.code() == StatusCode::kResourceExhausted) {
    // The memory budget is shared by every request in flight: this one may
    // fit once others are answered, so it is the server's 503, not a 4xx.
    const std::string why =
        "overloaded: the memory budget (--memory-budget) cannot hold this request now; retry "
        "later or send fewer or shorter inputs: ";
    return {503, "Overloaded", "", why + s.message(), kRetryAfterSeconds};
  }
  if (!s.ok()) {
    // Only this request's own inputs failed (the batcher ran the others of
    // its batch apart): TEI's 424 for a model failure.
    const int64_t row = (*job)->failed_row();
    const std::string at = row < 0 ? "" : row_name(row);
    const std::string where = at.empty() ? "" : " on " + at;
    return {
        424, "Backend", at,
        "model failed" + where +
            " (no attention backend could run it, or the one that ran failed): " + s.to_string()};
  }
  const int64_t values = (*job)->output_rows() * (*job)->width();
  if (!pipeline::all_finite((*job)->rows(), values)) {
    return {500, "Backend", "", "the model produced non-finite values (NaN or Inf)"};
  }
  return no_error();
}

namespace {

// Rows the model left unnormalized are normalized here when asked; a model
// that normalizes itself cannot give raw rows back.
ApiError check_normalize(const RouteContext& rc, bool normalize) {
  if (!normalize && rc.model_info.normalizes) {
    return validation_error("normalize",
                            "normalize: false is not available: model '" + rc.model_info.id +
                                "' ends with a Normalize module (modules.json), so its rows are "
                                "always L2-normalized");
  }
  return no_error();
}

}  // namespace

Reply handle_embed(RouteContext& rc, std::string_view body) {
  EmbedRequest req;
  ApiError e = parse_embed_request(body, parse_limits(rc), &req);
  if (e.ok()) e = needs_embedding_model(rc, "/embed");
  if (e.ok()) e = check_normalize(rc, req.normalize);
  RowShape shape;
  if (e.ok()) e = resolve_row_shape(rc, req.dimensions, "dimensions", req.normalize, &shape);
  Framing framing;
  if (e.ok()) e = tei_framing(rc, req.text, "prompt_name", &framing);
  PreparedInputs inputs;
  if (e.ok()) {
    e = prepare_inputs(rc.model, req.inputs, framing, "inputs", kTeiTruncateHint, &inputs);
  }
  std::shared_ptr<EmbedJob> job;
  if (e.ok()) e = run_job(rc, inputs, "inputs", &job);
  if (!e.ok()) return tei_error_reply(e);
  shape_rows(rc, *job, shape);

  const int dims = shape.dims;
  Reply reply;
  reply.body.reserve(static_cast<size_t>(job->count() * dims) * 12 + 16);
  reply.body.push_back('[');
  for (int64_t r = 0; r < job->count(); ++r) {
    if (r) reply.body.push_back(',');
    append_float_row(job->rows() + r * dims, dims, &reply.body);
  }
  reply.body.push_back(']');
  return reply;
}

}  // namespace tessera::server
