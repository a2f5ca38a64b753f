// POST /v2/embed: Cohere's Embed API (v2), as vLLM serves it, with every
// embedding type: float, base64, and the quantized int8 / uint8 (with
// --quantization-ranges), binary / ubinary (packed sign bits).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "pipeline/prompts.h"
#include "server/embedding_rows.h"
#include "server/inputs.h"
#include "server/json_out.h"
#include "server/request_parse_openai.h"
#include "server/routes.h"

namespace tessera::server {

namespace {

constexpr char kCohereTruncateHint[] = "send truncate \"END\" or \"START\" to cut it";

// Cohere's input_type -> the model's prompt (config_sentence_transformers.json):
// the first non-empty one of a prompt named as the input_type itself, then
// search_query -> "query", search_document -> "document", "passage" (every
// model has "query" and "document", empty unless set: e5 sets "query" and
// "passage"). No input_type: the model's default prompt; an input_type the
// model has no text for: none.
ApiError cohere_prompt(const pipeline::EmbeddingModel& model,
                       const std::optional<std::string>& input_type, std::string* text) {
  const model::Prompts& prompts = model.prompts();
  pipeline::PromptChoice choice;
  if (input_type) {
    std::vector<std::string> names = {*input_type};
    if (*input_type == "search_query") names.emplace_back("query");
    if (*input_type == "search_document") {
      names.emplace_back("document");
      names.emplace_back("passage");
    }
    choice.text = "";
    for (const std::string& name : names) {
      const auto it = prompts.by_name.find(name);
      if (it != prompts.by_name.end() && !it->second.empty()) {
        choice.text.reset();
        choice.name = name;
        break;
      }
    }
  }
  const Status s = pipeline::resolve_prompt(prompts, choice, "input_type", text);
  return s.ok() ? no_error() : validation_error("input_type", s.message());
}

// "embd-" and 32 random hex digits, as vLLM names its answers.
std::string response_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return std::string("embd-") + hex;
}

// One row of quantized bytes as JSON integers: int8 values for the signed
// precisions (int8, binary), uint8 for the others.
void append_byte_row(const uint8_t* bytes, int64_t n, bool is_signed_type, std::string* out) {
  out->push_back('[');
  for (int64_t i = 0; i < n; ++i) {
    if (i) out->push_back(',');
    const int v = is_signed_type ? static_cast<int>(static_cast<int8_t>(bytes[i])) : bytes[i];
    *out += std::to_string(v);
  }
  out->push_back(']');
}

// Checks what each embedding type needs before any work is done.
ApiError check_types(const RouteContext& rc, const CohereEmbedRequest& req, int dims) {
  for (size_t k = 0; k < req.types.size(); ++k) {
    Precision p{};
    if (!cohere_precision(req.types[k], &p)) continue;
    const std::string field = "embedding_types[" + std::to_string(req.type_index[k]) + "]";
    if (ApiError e = check_quantization(rc, p, dims, field, "output_dimension"); !e.ok()) return e;
  }
  return no_error();
}

ApiError prepare_cohere_inputs(RouteContext& rc, const CohereEmbedRequest& req,
                               PreparedInputs* inputs) {
  Framing framing;
  framing.truncate = req.truncate;
  framing.truncate_left = req.truncate_left;
  if (req.max_tokens) {
    // At most the model's limit; below its specials nothing would be left.
    const int specials = rc.model.frame().specials();
    if (*req.max_tokens <= specials) {
      return validation_error("max_tokens", "max_tokens = " + std::to_string(*req.max_tokens) +
                                                ": must leave room for text after the model's " +
                                                std::to_string(specials) + " special tokens");
    }
    framing.max_tokens =
        static_cast<int>(std::min<int64_t>(*req.max_tokens, rc.model.max_seq_length()));
  }
  ApiError e = cohere_prompt(rc.model, req.input_type, &framing.prompt);
  if (!e.ok()) return e;
  return prepare_inputs(rc.model, req.texts, framing, req.field, kCohereTruncateHint, inputs);
}

// {"float": [[...]], "int8": [[...]], ...}: every type asked for, in order.
bool append_embeddings(RouteContext& rc, const CohereEmbedRequest& req, const EmbedJob& job,
                       const float* rows, int dims, BoundedAnswer* answer, ApiError* error) {
  std::string& out = answer->text();
  std::vector<uint8_t> bytes;
  out += "{";
  for (size_t k = 0; k < req.types.size(); ++k) {
    const CohereType type = req.types[k];
    out += std::string(k ? "," : "") + "\"" + cohere_type_name(type) + "\":[";
    Precision p{};
    const bool quantized = cohere_precision(type, &p);
    if (quantized) {
      if (*error = quantize_rows(rc, rows, job.count(), dims, p, &bytes); !error->ok()) {
        return false;
      }
    }
    const int64_t width = quantized ? quantized_row_bytes(p, dims) : dims;
    for (int64_t r = 0; r < job.count(); ++r) {
      if (r) out.push_back(',');
      if (quantized) {
        append_byte_row(bytes.data() + r * width, width, is_signed(p), &out);
      } else if (type == CohereType::kBase64) {
        out += "\"" + base64_floats(rows + r * dims, dims) + "\"";
      } else {
        append_float_row(rows + r * dims, dims, &out);
      }
      if (!answer->fits()) {
        *error = answer->error();
        return false;
      }
    }
    out += "]";
  }
  out += "}";
  return true;
}

}  // namespace

Reply handle_cohere_embed(RouteContext& rc, std::string_view body) {
  CohereEmbedRequest req;
  ApiError e = parse_cohere_embed_request(body, &req);
  if (e.ok()) e = check_model_name(rc, req.model, "model");
  if (e.ok()) e = needs_embedding_model(rc, "/v2/embed");
  RowShape shape;
  if (e.ok()) {
    e = resolve_row_shape(rc, req.output_dimension, "output_dimension", /*normalize=*/true, &shape);
  }
  if (e.ok()) e = check_types(rc, req, shape.dims);
  PreparedInputs inputs;
  if (e.ok()) e = prepare_cohere_inputs(rc, req, &inputs);
  const int64_t tokens = inputs.tokens;
  std::shared_ptr<EmbedJob> job;
  if (e.ok()) e = run_job(rc, inputs, req.field, &job);
  if (!e.ok()) return cohere_error_reply(e);
  shape_rows(rc, *job, shape);

  BoundedAnswer answer(rc.alloc, rc.options.max_response_bytes, "the /v2/embed answer");
  std::string& out = answer.text();
  out += "{\"id\":\"" + response_id() + "\",\"embeddings\":";
  if (!append_embeddings(rc, req, *job, job->rows(), shape.dims, &answer, &e)) {
    return cohere_error_reply(e);
  }
  out += ",\"texts\":" + json_text(req.texts);
  const std::string n = std::to_string(tokens);
  out += ",\"meta\":{\"api_version\":{\"version\":\"2\"},\"billed_units\":{\"input_tokens\":" + n +
         "},\"tokens\":{\"input_tokens\":" + n + "}},\"response_type\":\"embeddings_by_type\"}";
  if (!answer.fits()) return cohere_error_reply(answer.error());
  Reply reply;
  reply.body = answer.take_text();
  reply.memory = answer.take_reservation();
  return reply;
}

}  // namespace tessera::server
