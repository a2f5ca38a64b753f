#include "server/request_parse_openai.h"

#include "server/request_fields.h"

namespace tessera::server {

namespace {

using request_fields::describe;
using request_fields::json;
using request_fields::parse_optional_int;
using request_fields::parse_optional_string;

// Token ids travel as int32 sequences; whether the model's vocabulary holds
// them is the route's question.
constexpr int64_t kMaxInputTokenId = INT32_MAX;

std::string nothing_or(const json& obj, const json::const_iterator& it) {
  return it == obj.end() ? std::string("nothing") : describe(*it);
}

// One list of token ids; id j is named name[j].
ApiError parse_token_ids(const json& list, const std::string& name, std::vector<int32_t>* out) {
  out->reserve(list.size());
  for (size_t j = 0; j < list.size(); ++j) {
    const json& v = list[j];
    const bool valid = v.is_number_integer() &&
                       !(v.is_number_unsigned() && v.get<uint64_t>() > kMaxInputTokenId) &&
                       v.get<int64_t>() >= 0 && v.get<int64_t>() <= kMaxInputTokenId;
    if (!valid) {
      const std::string at = name + "[" + std::to_string(j) + "]";
      return validation_error(
          at, at + " must be a token id (an integer in [0, 2^31)), got " + describe(v));
    }
    out->push_back(static_cast<int32_t>(v.get<int64_t>()));
  }
  return no_error();
}

// OpenAI's `input`: the first element of a list decides what the list holds
// (strings, token ids, or lists of token ids); every other element must be
// of the same kind.
ApiError parse_embedding_input(const json& body, EmbeddingInputs* out) {
  const auto it = body.find("input");
  const bool list_of_lists =
      it != body.end() && it->is_array() && !it->empty() && it->front().is_array();
  const bool one_list =
      it != body.end() && it->is_array() && !it->empty() && it->front().is_number();
  if (!list_of_lists && !one_list) {
    return request_fields::parse_texts(body, "input", kOpenAIMaxInputs, "OpenAI's limit",
                                       &out->texts);
  }
  out->by_ids = true;
  if (one_list) {
    out->one_id_list = true;
    out->token_ids.emplace_back();
    return parse_token_ids(*it, "input", &out->token_ids.back());
  }
  if (it->size() > kOpenAIMaxInputs) {
    return too_large_error("input", "input has " + std::to_string(it->size()) +
                                        " token lists but this server takes at most " +
                                        std::to_string(kOpenAIMaxInputs) +
                                        " per request (OpenAI's limit)");
  }
  out->token_ids.resize(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    const json& list = (*it)[i];
    const std::string name = "input[" + std::to_string(i) + "]";
    if (!list.is_array() || list.empty()) {
      return validation_error(name, name +
                                        " must be a non-empty list of token ids (input is a "
                                        "list of token lists), got " +
                                        describe(list));
    }
    if (ApiError e = parse_token_ids(list, name, &out->token_ids[i]); !e.ok()) return e;
  }
  return no_error();
}

constexpr CohereType kCohereTypes[] = {CohereType::kFloat,   CohereType::kInt8,
                                       CohereType::kUint8,   CohereType::kBinary,
                                       CohereType::kUbinary, CohereType::kBase64};
constexpr const char* kCohereInputTypes[] = {"search_document", "search_query", "classification",
                                             "clustering"};

ApiError parse_embedding_types(const json& body, CohereEmbedRequest* out) {
  const auto it = body.find("embedding_types");
  if (it == body.end() || it->is_null()) {
    out->types = {CohereType::kFloat};
    out->type_index = {0};
    return no_error();
  }
  if (!it->is_array() || it->empty()) {
    return validation_error("embedding_types",
                            "embedding_types must be a non-empty list of float, int8, uint8, "
                            "binary, ubinary, base64; got " +
                                describe(*it));
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const json& v = (*it)[i];
    const std::string name = "embedding_types[" + std::to_string(i) + "]";
    bool known = false;
    for (CohereType t : kCohereTypes) {
      if (v.is_string() && v == cohere_type_name(t)) {
        known = true;
        bool seen = false;
        for (CohereType u : out->types) seen = seen || u == t;
        if (!seen) {
          out->types.push_back(t);
          out->type_index.push_back(i);
        }
      }
    }
    if (!known) {
      return validation_error(name, name +
                                        " must be one of float, int8, uint8, binary, ubinary, "
                                        "base64; got " +
                                        describe(v));
    }
  }
  return no_error();
}

// Cohere's `inputs`: [{"content": [{"type": "text", "text": str}]}]; one
// text part per input (tessera embeds text only).
ApiError parse_cohere_inputs(const json& list, CohereEmbedRequest* out) {
  for (size_t i = 0; i < list.size(); ++i) {
    const json& input = list[i];
    const std::string name = "inputs[" + std::to_string(i) + "]";
    const auto content = input.is_object() ? input.find("content") : input.end();
    if (!input.is_object() || content == input.end() || !content->is_array() ||
        content->size() != 1) {
      return validation_error(name, name +
                                        " must be {\"content\": [{\"type\": \"text\", \"text\": "
                                        "str}]} (one text part: this server embeds text only), "
                                        "got " +
                                        describe(input));
    }
    const json& part = content->front();
    const auto text = part.is_object() ? part.find("text") : part.end();
    if (!part.is_object() || part.value("type", json()) != "text" || text == part.end() ||
        !text->is_string()) {
      const std::string at = name + ".content[0]";
      return validation_error(at, at +
                                      " must be {\"type\": \"text\", \"text\": str} (this server "
                                      "embeds text only), got " +
                                      describe(part));
    }
    out->texts.push_back(text->get<std::string>());
  }
  return no_error();
}

ApiError parse_cohere_texts(const json& body, CohereEmbedRequest* out) {
  const auto images = body.find("images");
  if (images != body.end() && !images->is_null()) {
    return validation_error("images", "images are not supported: this server embeds text only");
  }
  const auto texts = body.find("texts");
  const auto inputs = body.find("inputs");
  const bool has_texts = texts != body.end() && !texts->is_null();
  const bool has_inputs = inputs != body.end() && !inputs->is_null();
  if (has_texts == has_inputs) {
    return validation_error(has_texts ? "inputs" : "texts",
                            "send one of texts ([str]) or inputs ([{\"content\": [...]}]), " +
                                std::string(has_texts ? "not both" : "got neither"));
  }
  if (has_texts) {
    return request_fields::parse_texts(body, "texts", kCohereMaxTexts, "Cohere's limit",
                                       &out->texts);
  }
  out->field = "inputs";
  if (!inputs->is_array() || inputs->empty()) {
    return validation_error("inputs", "inputs must be a non-empty list, got " + describe(*inputs));
  }
  if (inputs->size() > kCohereMaxTexts) {
    return too_large_error("inputs", "inputs has " + std::to_string(inputs->size()) +
                                         " entries but this server takes at most " +
                                         std::to_string(kCohereMaxTexts) +
                                         " per request (Cohere's limit)");
  }
  return parse_cohere_inputs(*inputs, out);
}

}  // namespace

ApiError parse_openai_request(std::string_view body, const ParseLimits& limits,
                              OpenAIRequest* out) {
  json j;
  ApiError e = request_fields::parse_object(body, &j);
  if (!e.ok()) return e;
  if (e = parse_embedding_input(j, &out->input); !e.ok()) return e;
  if (e = parse_optional_string(j, "model", &out->model); !e.ok()) return e;
  auto format = j.find("encoding_format");
  if (format != j.end() && !format->is_null()) {
    if (*format == "float") {
      out->base64 = false;
    } else if (*format == "base64") {
      out->base64 = true;
    } else {
      return validation_error(
          "encoding_format",
          "encoding_format must be \"float\" or \"base64\", got " + describe(*format));
    }
  }
  if (e = parse_optional_int(j, "dimensions", &out->dimensions); !e.ok()) return e;
  std::optional<std::string> user;
  if (e = parse_optional_string(j, "user", &user); !e.ok()) return e;
  out->truncate = limits.auto_truncate;
  return no_error();
}

const char* cohere_type_name(CohereType t) {
  switch (t) {
    case CohereType::kFloat:
      return "float";
    case CohereType::kInt8:
      return "int8";
    case CohereType::kUint8:
      return "uint8";
    case CohereType::kBinary:
      return "binary";
    case CohereType::kUbinary:
      return "ubinary";
    case CohereType::kBase64:
      return "base64";
  }
  return "?";
}

bool cohere_precision(CohereType t, Precision* p) {
  switch (t) {
    case CohereType::kInt8:
      *p = Precision::kInt8;
      return true;
    case CohereType::kUint8:
      *p = Precision::kUint8;
      return true;
    case CohereType::kBinary:
      *p = Precision::kBinary;
      return true;
    case CohereType::kUbinary:
      *p = Precision::kUbinary;
      return true;
    case CohereType::kFloat:
    case CohereType::kBase64:
      return false;
  }
  return false;
}

ApiError parse_cohere_embed_request(std::string_view body, CohereEmbedRequest* out) {
  json j;
  ApiError e = request_fields::parse_object(body, &j);
  if (!e.ok()) return e;
  if (e = parse_cohere_texts(j, out); !e.ok()) return e;
  if (e = parse_optional_string(j, "model", &out->model); !e.ok()) return e;
  if (e = parse_optional_string(j, "input_type", &out->input_type); !e.ok()) return e;
  if (out->input_type) {
    bool known = false;
    for (const char* t : kCohereInputTypes) known = known || *out->input_type == t;
    if (!known) {
      return validation_error("input_type",
                              "input_type must be one of search_document, search_query, "
                              "classification, clustering (this server embeds text only), got \"" +
                                  out->input_type->substr(0, 64) + "\"");
    }
  }
  if (e = parse_embedding_types(j, out); !e.ok()) return e;
  const auto truncate = j.find("truncate");
  if (truncate != j.end() && !truncate->is_null()) {
    if (*truncate == "END") {
      out->truncate = true;
    } else if (*truncate == "START") {
      out->truncate_left = true;
    } else if (*truncate == "NONE") {
      out->truncate = false;
    } else {
      return validation_error("truncate", "truncate must be \"NONE\", \"START\" or \"END\", got " +
                                              nothing_or(j, truncate));
    }
  }
  if (e = parse_optional_int(j, "output_dimension", &out->output_dimension); !e.ok()) return e;
  if (e = parse_optional_int(j, "max_tokens", &out->max_tokens); !e.ok()) return e;
  if (out->max_tokens && *out->max_tokens < 1) {
    return validation_error(
        "max_tokens", "max_tokens = " + std::to_string(*out->max_tokens) + ": must be at least 1");
  }
  std::optional<int64_t> priority;  // accepted; requests are served in arrival order
  return parse_optional_int(j, "priority", &priority);
}

}  // namespace tessera::server
