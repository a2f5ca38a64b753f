#include "server/request_parse.h"

#include <nlohmann/json.hpp>

#include "runtime/json_input.h"
#include "server/request_fields.h"

namespace tessera::server {

namespace request_fields {

ApiError parse_object(std::string_view body, json* out) {
  // 400 like TEI (axum) for a body that is not JSON at all: syntax, invalid
  // UTF-8, a number outside the double range, nesting deeper than serde_json
  // allows.
  if (Status s = json_input::parse(body, "body", out); !s.ok()) {
    return {400, "Validation", "body", s.message()};
  }
  if (!out->is_object()) {
    return validation_error("body", "body must be a JSON object, got " + describe(*out));
  }
  return no_error();
}

ApiError parse_texts(const json& body, const char* field, const ParseLimits& limits,
                     std::vector<std::string>* out) {
  return parse_texts(body, field, limits.max_client_batch_size, "--max-client-batch-size", out);
}

ApiError parse_texts(const json& body, const char* field, size_t max_texts, const char* limit,
                     std::vector<std::string>* out) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) {
    return validation_error(field, std::string(field) +
                                       " is missing: send a string or a list "
                                       "of strings");
  }
  if (it->is_string()) {
    out->push_back(it->get<std::string>());
    return no_error();
  }
  if (!it->is_array()) {
    return validation_error(field, std::string(field) +
                                       " must be a string or a list of strings, "
                                       "got " +
                                       describe(*it));
  }
  if (it->empty()) {
    return validation_error(field, std::string(field) +
                                       " is an empty list: send at least one "
                                       "text");
  }
  if (it->size() > max_texts) {
    return too_large_error(field, std::string(field) + " has " + std::to_string(it->size()) +
                                      " texts but this server takes at most " +
                                      std::to_string(max_texts) + " per request (" + limit + ")");
  }
  out->reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    const json& v = (*it)[i];
    const std::string name = std::string(field) + "[" + std::to_string(i) + "]";
    if (!v.is_string()) {
      return validation_error(name, name + " must be a string, got " + describe(v));
    }
    out->push_back(v.get<std::string>());
  }
  return no_error();
}

ApiError parse_bool(const json& obj, const char* key, bool* out, const std::string& prefix) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return no_error();
  if (!it->is_boolean()) {
    const std::string field = prefix + key;
    return validation_error(field, field + " must be true or false, got " + describe(*it));
  }
  *out = it->get<bool>();
  return no_error();
}

ApiError parse_optional_string(const json& obj, const char* key, std::optional<std::string>* out,
                               const std::string& prefix) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return no_error();
  if (!it->is_string()) {
    const std::string field = prefix + key;
    return validation_error(field, field + " must be a string, got " + describe(*it));
  }
  *out = it->get<std::string>();
  return no_error();
}

ApiError parse_optional_int(const json& obj, const char* key, std::optional<int64_t>* out,
                            const std::string& prefix) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return no_error();
  // nlohmann keeps integers past int64 as unsigned: get<int64_t>() would wrap.
  const bool fits =
      it->is_number_integer() &&
      (!it->is_number_unsigned() || it->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX));
  if (!fits) {
    const std::string field = prefix + key;
    return validation_error(field, field + " must be an integer, got " + describe(*it));
  }
  *out = it->get<int64_t>();
  return no_error();
}

ApiError parse_text_options(const json& obj, const std::string& prefix, const ParseLimits& limits,
                            TextRequestOptions* out) {
  out->truncate = limits.auto_truncate;
  if (ApiError e = parse_bool(obj, "truncate", &out->truncate, prefix); !e.ok()) return e;
  // TEI's serde aliases: "Left" / "left", "Right" / "right".
  auto dir = obj.find("truncation_direction");
  if (dir != obj.end() && !dir->is_null()) {
    if (*dir == "Left" || *dir == "left") {
      out->truncate_left = true;
    } else if (*dir == "Right" || *dir == "right") {
      out->truncate_left = false;
    } else {
      const std::string field = prefix + "truncation_direction";
      return validation_error(field,
                              field + " must be \"Left\" or \"Right\", got " + describe(*dir));
    }
  }
  return parse_optional_string(obj, "prompt_name", &out->prompt_name, prefix);
}

ApiError parse_text_options(const json& obj, const std::string& prefix, const ParseLimits& limits,
                            bool* truncate) {
  TextRequestOptions options;
  if (ApiError e = parse_text_options(obj, prefix, limits, &options); !e.ok()) return e;
  if (options.truncate_left) {
    return validation_error(prefix + "truncation_direction",
                            prefix +
                                "truncation_direction: \"Left\" is not supported on this route "
                                "(pairs are cut longest first); send \"Right\"");
  }
  if (options.prompt_name) {
    return validation_error(prefix + "prompt_name",
                            prefix + "prompt_name is not supported on this route, got \"" +
                                options.prompt_name->substr(0, 64) + "\"");
  }
  *truncate = options.truncate;
  return no_error();
}

}  // namespace request_fields

using request_fields::describe;
using request_fields::json;
using request_fields::parse_bool;
using request_fields::parse_object;
using request_fields::parse_optional_int;
using request_fields::parse_optional_string;
using request_fields::parse_text_options;
using request_fields::parse_texts;

ApiError parse_embed_request(std::string_view body, const ParseLimits& limits, EmbedRequest* out) {
  json j;
  ApiError e = parse_object(body, &j);
  if (!e.ok()) return e;
  if (e = parse_texts(j, "inputs", limits, &out->inputs); !e.ok()) return e;
  if (e = parse_bool(j, "normalize", &out->normalize); !e.ok()) return e;
  if (e = parse_optional_int(j, "dimensions", &out->dimensions); !e.ok()) return e;
  return parse_text_options(j, "", limits, &out->text);
}

ApiError parse_embed_all_request(std::string_view body, const ParseLimits& limits,
                                 EmbedAllRequest* out) {
  json j;
  ApiError e = parse_object(body, &j);
  if (!e.ok()) return e;
  if (e = parse_texts(j, "inputs", limits, &out->inputs); !e.ok()) return e;
  return parse_text_options(j, "", limits, &out->text);
}

ApiError parse_similarity_request(std::string_view body, const ParseLimits& limits,
                                  SimilarityRequest* out) {
  json j;
  ApiError e = parse_object(body, &j);
  if (!e.ok()) return e;
  const auto inputs = j.find("inputs");
  if (inputs == j.end() || !inputs->is_object()) {
    return validation_error("inputs",
                            "inputs must be an object {\"source_sentence\": str, \"sentences\": "
                            "[str]}, got " +
                                (inputs == j.end() ? std::string("nothing") : describe(*inputs)));
  }
  const auto source = inputs->find("source_sentence");
  if (source == inputs->end() || !source->is_string()) {
    return validation_error(
        "inputs.source_sentence",
        "inputs.source_sentence must be a string, got " +
            (source == inputs->end() ? std::string("nothing") : describe(*source)));
  }
  out->source = source->get<std::string>();
  const auto sentences = inputs->find("sentences");
  if (sentences == inputs->end() || !sentences->is_array()) {
    return validation_error(
        "inputs.sentences",
        "inputs.sentences must be a list of strings, got " +
            (sentences == inputs->end() ? std::string("nothing") : describe(*sentences)));
  }
  if (sentences->empty()) {
    return {400, "Empty", "inputs.sentences",
            "inputs.sentences cannot be empty: send at least one sentence to compare"};
  }
  // + 1: the source sentence is embedded in the same request.
  const size_t texts = sentences->size() + 1;
  if (texts > limits.max_client_batch_size) {
    return too_large_error("inputs.sentences",
                           "inputs.sentences has " + std::to_string(sentences->size()) +
                               " sentences; with the source that is " + std::to_string(texts) +
                               " texts but this server takes at most " +
                               std::to_string(limits.max_client_batch_size) +
                               " per request (--max-client-batch-size)");
  }
  out->sentences.reserve(sentences->size());
  for (size_t i = 0; i < sentences->size(); ++i) {
    const json& v = (*sentences)[i];
    if (!v.is_string()) {
      const std::string name = "inputs.sentences[" + std::to_string(i) + "]";
      return validation_error(name, name + " must be a string, got " + describe(v));
    }
    out->sentences.push_back(v.get<std::string>());
  }
  const auto params = j.find("parameters");
  if (params == j.end() || params->is_null()) {
    out->text.truncate = limits.auto_truncate;
    return no_error();
  }
  if (!params->is_object()) {
    return validation_error("parameters",
                            "parameters must be an object or null, got " + describe(*params));
  }
  return parse_text_options(*params, "parameters.", limits, &out->text);
}

namespace {

// The largest id TEI takes (u32).
constexpr int64_t kMaxTokenId = 0xFFFFFFFFLL;

ApiError parse_id_list(const json& list, const std::string& name, std::vector<int64_t>* out) {
  out->reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const json& v = list[i];
    const bool valid =
        (v.is_number_unsigned() && v.get<uint64_t>() <= kMaxTokenId) ||
        (v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= kMaxTokenId);
    if (!valid) {
      const std::string at = name + "[" + std::to_string(i) + "]";
      return validation_error(
          at, at + " must be a token id (an integer in [0, 2^32)), got " + describe(v));
    }
    out->push_back(v.get<int64_t>());
  }
  return no_error();
}

}  // namespace

ApiError parse_decode_request(std::string_view body, const ParseLimits& limits,
                              DecodeRequest* out) {
  json j;
  ApiError e = parse_object(body, &j);
  if (!e.ok()) return e;
  const auto ids = j.find("ids");
  if (ids == j.end() || !ids->is_array()) {
    return validation_error("ids", "ids must be a list of token ids or a list of such lists, got " +
                                       (ids == j.end() ? std::string("nothing") : describe(*ids)));
  }
  // Like TEI, [] is one empty list of ids (it decodes to ""), and a list
  // whose first element is a list is a batch.
  out->batch = !ids->empty() && ids->front().is_array();
  if (!out->batch) {
    out->ids.emplace_back();
    if (e = parse_id_list(*ids, "ids", &out->ids.back()); !e.ok()) return e;
  } else {
    if (ids->size() > limits.max_client_batch_size) {
      return too_large_error("ids", "ids has " + std::to_string(ids->size()) +
                                        " lists but this server takes at most " +
                                        std::to_string(limits.max_client_batch_size) +
                                        " per request (--max-client-batch-size)");
    }
    out->ids.resize(ids->size());
    for (size_t i = 0; i < ids->size(); ++i) {
      const std::string name = "ids[" + std::to_string(i) + "]";
      if (!(*ids)[i].is_array()) {
        return validation_error(name, name +
                                          " must be a list of token ids (ids is a list of "
                                          "lists), got " +
                                          describe((*ids)[i]));
      }
      if (e = parse_id_list((*ids)[i], name, &out->ids[i]); !e.ok()) return e;
    }
  }
  return parse_bool(j, "skip_special_tokens", &out->skip_special_tokens);
}

ApiError parse_tokenize_request(std::string_view body, const ParseLimits& limits,
                                TokenizeRequest* out) {
  json j;
  ApiError e = parse_object(body, &j);
  if (!e.ok()) return e;
  if (e = parse_texts(j, "inputs", limits, &out->inputs); !e.ok()) return e;
  if (e = parse_optional_string(j, "prompt_name", &out->prompt_name); !e.ok()) return e;
  return parse_bool(j, "add_special_tokens", &out->add_special_tokens);
}

ApiError parse_documents_request(std::string_view body, const ParseLimits& limits,
                                 DocumentsRequest* out) {
  json j;
  ApiError e = parse_object(body, &j);
  if (!e.ok()) return e;
  auto it = j.find("documents");
  if (it == j.end() || !it->is_array() || it->empty()) {
    return validation_error("documents",
                            "documents must be a non-empty list of strings or {\"id\", \"text\"} "
                            "objects, got " +
                                (it == j.end() ? std::string("nothing") : describe(*it)));
  }
  if (it->size() > limits.max_client_batch_size) {
    return too_large_error("documents", "documents has " + std::to_string(it->size()) +
                                            " entries but this server takes at most " +
                                            std::to_string(limits.max_client_batch_size) +
                                            " per request (--max-client-batch-size)");
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const json& d = (*it)[i];
    const std::string name = "documents[" + std::to_string(i) + "]";
    if (d.is_string()) {
      out->ids.push_back(std::to_string(i));
      out->texts.push_back(d.get<std::string>());
      continue;
    }
    const auto text = d.is_object() ? d.find("text") : d.end();
    const auto id = d.is_object() ? d.find("id") : d.end();
    if (!d.is_object() || text == d.end() || !text->is_string()) {
      return validation_error(name, name + " must be a string or an object with a string "
                                           "\"text\", got " + describe(d));
    }
    if (id != d.end() && !id->is_string() && !id->is_number_integer()) {
      return validation_error(name + ".id",
                              name + ".id must be a string or an integer, got " + describe(*id));
    }
    out->ids.push_back(id == d.end() ? std::to_string(i) : id->dump());
    out->texts.push_back(text->get<std::string>());
  }
  if (e = parse_optional_string(j, "prompt_name", &out->prompt_name); !e.ok()) return e;
  if (e = parse_optional_int(j, "dimensions", &out->dimensions); !e.ok()) return e;
  return parse_bool(j, "doc_embedding", &out->doc_embedding);
}

}  // namespace tessera::server
