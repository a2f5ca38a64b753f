#include "server/request_parse_heads.h"

#include "server/request_fields.h"

namespace tessera::server {

namespace {

using request_fields::describe;
using request_fields::json;

// One /predict input: a list of 1 (a text) or 2 (a pair) strings.
ApiError parse_sequence(const json& v, const std::string& name, pipeline::ScoreInput* out) {
  const auto bad = [&] {
    return validation_error(name, name +
                                      " must be a text or a pair of texts: [str] or [str, str], "
                                      "got " + describe(v));
  };
  if (!v.is_array() || v.empty() || v.size() > 2) return bad();
  for (const json& s : v) {
    if (!s.is_string()) return bad();
  }
  out->text = v[0].get<std::string>();
  if (v.size() == 2) out->pair = v[1].get<std::string>();
  return no_error();
}

}  // namespace

ApiError parse_rerank_request(std::string_view body, const ParseLimits& limits,
                              RerankRequest* out) {
  json j;
  ApiError e = request_fields::parse_object(body, &j);
  if (!e.ok()) return e;
  const auto query = j.find("query");
  if (query == j.end() || !query->is_string()) {
    return validation_error(
        "query", "query must be a string, got " +
                     (query == j.end() ? std::string("nothing") : describe(*query)));
  }
  out->query = query->get<std::string>();
  const auto texts = j.find("texts");
  if (texts == j.end() || !texts->is_array()) {
    return validation_error(
        "texts", "texts must be a list of strings, got " +
                     (texts == j.end() ? std::string("nothing") : describe(*texts)));
  }
  if (texts->empty()) {
    return {400, "Empty", "texts", "texts cannot be empty: send at least one text to rank"};
  }
  if (e = request_fields::parse_texts(j, "texts", limits, &out->texts); !e.ok()) return e;
  if (e = request_fields::parse_bool(j, "raw_scores", &out->raw_scores); !e.ok()) return e;
  if (e = request_fields::parse_bool(j, "return_text", &out->return_text); !e.ok()) return e;
  return request_fields::parse_text_options(j, "", limits, &out->truncate);
}

ApiError parse_predict_request(std::string_view body, const ParseLimits& limits,
                               PredictRequest* out) {
  json j;
  ApiError e = request_fields::parse_object(body, &j);
  if (!e.ok()) return e;
  const auto inputs = j.find("inputs");
  if (inputs == j.end() || inputs->is_null()) {
    return validation_error("inputs",
                            "inputs is missing: send a text, a pair [str, str] or a list of "
                            "them [[str, str], ...]");
  }
  if (inputs->is_string()) {
    out->inputs.push_back({inputs->get<std::string>(), std::nullopt});
  } else if (!inputs->is_array() || inputs->empty()) {
    return validation_error("inputs", "inputs must be a text, a pair [str, str] or a non-empty "
                                      "list of them [[str, str], ...], got " + describe(*inputs));
  } else if ((*inputs)[0].is_string()) {
    out->inputs.emplace_back();
    if (e = parse_sequence(*inputs, "inputs", &out->inputs[0]); !e.ok()) return e;
  } else {
    out->batch = true;
    if (inputs->size() > limits.max_client_batch_size) {
      return too_large_error("inputs", "inputs has " + std::to_string(inputs->size()) +
                                           " inputs but this server takes at most " +
                                           std::to_string(limits.max_client_batch_size) +
                                           " per request (--max-client-batch-size)");
    }
    out->inputs.resize(inputs->size());
    for (size_t i = 0; i < inputs->size(); ++i) {
      e = parse_sequence((*inputs)[i], "inputs[" + std::to_string(i) + "]", &out->inputs[i]);
      if (!e.ok()) return e;
    }
  }
  if (e = request_fields::parse_bool(j, "raw_scores", &out->raw_scores); !e.ok()) return e;
  return request_fields::parse_text_options(j, "", limits, &out->truncate);
}

ApiError parse_embed_sparse_request(std::string_view body, const ParseLimits& limits,
                                    EmbedSparseRequest* out) {
  json j;
  ApiError e = request_fields::parse_object(body, &j);
  if (!e.ok()) return e;
  if (e = request_fields::parse_texts(j, "inputs", limits, &out->inputs); !e.ok()) return e;
  return request_fields::parse_text_options(j, "", limits, &out->truncate);
}

}  // namespace tessera::server
