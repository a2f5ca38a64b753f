// OpenAI's embeddings API: POST /v1/embeddings (and /embeddings), GET
// /v1/models and /v1/models/{id}. Errors are OpenAI's shape and codes: 400
// for a request refused, 401, 404 model_not_found, 429.
#include <nlohmann/json.hpp>

#include "server/embedding_rows.h"
#include "server/inputs.h"
#include "server/json_out.h"
#include "server/request_parse_openai.h"
#include "server/routes.h"

namespace tessera::server {

namespace {

constexpr char kOpenAITruncateHint[] = "start the server with --auto-truncate to cut it";

nlohmann::json model_object(const RouteContext& rc) {
  return {{"id", served_model_name(rc)},
          {"object", "model"},
          {"created", rc.info.started_at},
          {"owned_by", "tessera"}};
}

ApiError model_not_found(const std::string& field, const std::string& model,
                         const std::string& served) {
  ApiError e{404, "NotFound", field,
             "The model `" + model.substr(0, 200) + "` does not exist: this server serves `" +
                 served + "` (--served-model-name)"};
  e.code = "model_not_found";
  return e;
}

ApiError prepare_openai_inputs(RouteContext& rc, const OpenAIRequest& req, PreparedInputs* inputs) {
  Framing framing;
  framing.truncate = req.truncate;
  // No prompt_name in OpenAI's API: the model's default prompt, if any.
  ApiError e = resolve_prompt_text(rc.model, std::nullopt, "prompt", &framing.prompt);
  if (!e.ok()) return e;
  if (req.input.by_ids) {
    return prepare_id_inputs(rc.model, req.input.token_ids, req.input.one_id_list,
                             rc.model_info.vocab_size, framing, "input", kOpenAITruncateHint,
                             inputs);
  }
  return prepare_inputs(rc.model, req.input.texts, framing, "input", kOpenAITruncateHint, inputs);
}

}  // namespace

const std::string& served_model_name(const RouteContext& rc) {
  return rc.options.served_model_name.empty() ? rc.model_info.id : rc.options.served_model_name;
}

ApiError check_model_name(const RouteContext& rc, const std::optional<std::string>& model,
                          const std::string& field) {
  if (!model || *model == served_model_name(rc)) return no_error();
  return model_not_found(field, *model, served_model_name(rc));
}

Reply handle_openai_embeddings(RouteContext& rc, std::string_view body) {
  OpenAIRequest req;
  ApiError e = parse_openai_request(body, parse_limits(rc), &req);
  if (e.ok()) e = check_model_name(rc, req.model, "model");
  if (e.ok()) e = needs_embedding_model(rc, "/v1/embeddings");
  RowShape shape;
  if (e.ok()) e = resolve_row_shape(rc, req.dimensions, "dimensions", /*normalize=*/true, &shape);
  PreparedInputs inputs;
  if (e.ok()) e = prepare_openai_inputs(rc, req, &inputs);
  const int64_t tokens = inputs.tokens;
  std::shared_ptr<EmbedJob> job;
  if (e.ok()) e = run_job(rc, inputs, "input", &job);
  if (!e.ok()) return openai_error_reply(e);
  shape_rows(rc, *job, shape);

  const int dims = shape.dims;
  BoundedAnswer answer(rc.alloc, rc.options.max_response_bytes, "the /v1/embeddings answer");
  std::string& out = answer.text();
  out.reserve(static_cast<size_t>(job->count() * dims) * 12 + 256);
  out += "{\"object\":\"list\",\"data\":[";
  for (int64_t r = 0; r < job->count(); ++r) {
    if (r) out.push_back(',');
    out += "{\"object\":\"embedding\",\"index\":" + std::to_string(r) + ",\"embedding\":";
    const float* row = job->rows() + r * dims;
    if (req.base64) {
      out += "\"" + base64_floats(row, dims) + "\"";
    } else {
      append_float_row(row, dims, &out);
    }
    out.push_back('}');
    if (!answer.fits()) return openai_error_reply(answer.error());
  }
  out += "],\"model\":" + json_text(served_model_name(rc)) +
         ",\"usage\":{\"prompt_tokens\":" + std::to_string(tokens) +
         ",\"total_tokens\":" + std::to_string(tokens) + "}}";
  if (!answer.fits()) return openai_error_reply(answer.error());
  Reply reply;
  reply.body = answer.take_text();
  reply.memory = answer.take_reservation();
  return reply;
}

Reply handle_openai_models(RouteContext& rc) {
  const nlohmann::json list = {{"object", "list"},
                               {"data", nlohmann::json::array({model_object(rc)})}};
  return {200, json_text(list)};
}

Reply handle_openai_model(RouteContext& rc, std::string_view id) {
  const std::string name(id);
  if (name != served_model_name(rc)) {
    return openai_error_reply(model_not_found("model", name, served_model_name(rc)));
  }
  return {200, json_text(model_object(rc))};
}

}  // namespace tessera::server
