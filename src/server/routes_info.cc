// POST /tokenize, GET /health, GET /info, GET /metrics.
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "pipeline/model_kind.h"
#include "runtime/metrics.h"
#include "server/connection_reactor.h"
#include "server/inputs.h"
#include "server/json_out.h"
#include "server/request_parse.h"
#include "server/routes.h"

namespace tessera::server {

namespace {

// VmRSS from /proc/self/statm (pages); 0 when unreadable.
size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t total_pages = 0, resident_pages = 0;
  if (!(statm >> total_pages >> resident_pages)) return 0;
  return resident_pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// A special token's text as TEI gives it: the tokenizer's own text of the id
// ("[CLS]", "<s>", "<|endoftext|>"); "[UNK]" if it has none.
std::string special_text(const pipeline::EmbeddingModel& model, int32_t id) {
  std::string text;
  size_t bad = 0;
  const Status s = model.decode({id}, /*skip_special_tokens=*/false, &text, &bad);
  return s.ok() && !text.empty() ? text : "[UNK]";
}

// One token as TEI writes it (keys in nlohmann's order, as before).
void append_token(const model::TokenSpan& t, const std::string& text, const RouteContext& rc,
                  std::string* out) {
  const bool special = t.begin < 0;
  std::string piece;
  if (special) {
    piece = special_text(rc.model, t.id);
  } else {
    piece = text.substr(static_cast<size_t>(t.begin), static_cast<size_t>(t.end - t.begin));
  }
  *out += R"({"id":)" + std::to_string(t.id) + R"(,"special":)" + (special ? "true" : "false");
  if (special) {
    *out += R"(,"start":null,"stop":null)";
  } else {
    *out += R"(,"start":)" + std::to_string(t.begin) + R"(,"stop":)" + std::to_string(t.end);
  }
  *out += R"(,"text":)" + json_text(piece) + "}";
}

}  // namespace

// Written straight into a BoundedAnswer: a JSON tree of a 2 MB text's
// tokens took ~700 MB (issue 35); the text is what is sent, and its size is
// capped and counted against the memory budget as it grows.
Reply handle_tokenize(RouteContext& rc, std::string_view body) {
  TokenizeRequest req;
  ApiError e = parse_tokenize_request(body, parse_limits(rc), &req);
  // As TEI: the prompt's tokens come first, offsets count from the
  // prompt's start and each token's text is cut from prompt + input.
  std::string prompt;
  if (e.ok()) e = resolve_prompt_text(rc.model, req.prompt_name, "prompt_name", &prompt);
  if (!e.ok()) return tei_error_reply(e);
  BoundedAnswer answer(rc.alloc, rc.options.max_response_bytes, "the /tokenize answer");
  std::string& out = answer.text();
  std::vector<model::TokenSpan> tokens;
  out.push_back('[');
  std::string text;
  for (size_t i = 0; i < req.inputs.size(); ++i) {
    text = prompt + req.inputs[i];
    e = tokenize_text(rc.model, text, req.add_special_tokens, "inputs[" + std::to_string(i) + "]",
                      &tokens);
    if (!e.ok()) return tei_error_reply(e);
    out += i ? ",[" : "[";
    for (size_t k = 0; k < tokens.size(); ++k) {
      if (k) out.push_back(',');
      append_token(tokens[k], text, rc, &out);
      if (k % 256 == 0 && !answer.fits()) return bounded_reply(answer);
    }
    out.push_back(']');
  }
  out.push_back(']');
  return bounded_reply(answer);
}

Reply handle_health(RouteContext& rc) {
  if (rc.draining) return {503, R"({"status":"draining"})"};
  return {200, R"({"status":"ok"})"};
}

namespace {

// TEI's model_type: {"embedding": {"pooling"}} (SPLADE's pooling is
// "splade"), or {"reranker" | "classifier": {"id2label", "label2id"}}.
nlohmann::json model_type(const RouteContext& rc) {
  const ModelKind kind = pipeline::model_kind(rc.model);
  if (kind == ModelKind::kEmbedding || kind == ModelKind::kSparse) {
    const std::string pooling = kind == ModelKind::kSparse ? "splade" : rc.model_info.pooling;
    return {{"embedding", {{"pooling", pooling}}}};
  }
  nlohmann::json id2label = nlohmann::json::object();
  nlohmann::json label2id = nlohmann::json::object();
  const std::vector<std::string>& labels = rc.model.labels();
  for (size_t i = 0; i < labels.size(); ++i) {
    id2label[std::to_string(i)] = labels[i];
    label2id[labels[i]] = i;
  }
  return {{model_kind_name(kind), {{"id2label", id2label}, {"label2id", label2id}}}};
}

}  // namespace

Reply handle_info(RouteContext& rc) {
  const ModelInfo& m = rc.model_info;
  const ServerOptions& o = rc.options;
  const std::string& default_prompt = rc.model.prompts().default_name;
  // TEI's /info fields first, then tessera's own.
  nlohmann::json j = {
      {"model_id", m.id},
      {"model_dtype", "float32"},
      {"model_type", model_type(rc)},
      {"max_concurrent_requests", o.batching.max_concurrent_requests},
      {"max_input_length", m.max_length},
      {"max_batch_tokens", o.batching.max_batch_tokens},
      {"max_batch_requests", o.batching.max_batch_sequences == 0
                                 ? nlohmann::json(nullptr)
                                 : nlohmann::json(o.batching.max_batch_sequences)},
      {"max_client_batch_size", o.max_client_batch_size},
      {"auto_truncate", o.auto_truncate},
      {"served_model_name", served_model_name(rc)},
      {"version", rc.info.version},
      {"model_dir", m.dir},
      {"dim", m.dim},
      {"normalizes", m.normalizes},
      {"weight_bytes", m.weight_bytes},
      {"weights", m.weights},
      {"payload_limit_bytes", o.payload_limit_bytes},
      {"attention_policy", rc.info.attention_policy},
      {"backends", rc.info.backends},
      {"auth", !o.api_key.empty()},
      // config_sentence_transformers.json's prompts (prompt_name), and the
      // one used when a request names none.
      {"prompts", rc.model.prompts().by_name},
      {"default_prompt_name",
       default_prompt.empty() ? nlohmann::json(nullptr) : nlohmann::json(default_prompt)},
      {"quantization_ranges_dims", o.quantization_ranges.empty()
                                       ? nlohmann::json(nullptr)
                                       : nlohmann::json(o.quantization_dims)},
  };
  return {200, json_text(j)};
}

Reply handle_metrics(RouteContext& rc) {
  MetricsText m;
  rc.metrics.append(&m);
  m.gauge("tessera_server_requests_in_flight", "Embedding requests admitted, not yet answered", {},
          static_cast<double>(rc.batcher.in_flight()));
  m.gauge("tessera_server_queue_sequences", "Sequences waiting for a batch", {},
          static_cast<double>(rc.batcher.queued()));
  m.gauge("tessera_server_max_concurrent_requests", "Admission limit (--max-concurrent-requests)",
          {}, static_cast<double>(rc.options.batching.max_concurrent_requests));
  if (const ConnectionReactor* r = rc.connections.load()) {
    const ConnectionPool& pool = r->workers();
    m.gauge("tessera_server_http_threads", "HTTP worker threads started (they are kept for reuse)",
            {}, static_cast<double>(pool.threads()));
    m.gauge("tessera_server_http_connections", "Requests being served by a worker thread", {},
            static_cast<double>(pool.busy()));
    m.gauge("tessera_server_open_connections", "Client connections held (idle, arriving or served)",
            {}, static_cast<double>(r->open_connections()));
    m.gauge("tessera_server_max_connections",
            "Connections held at most; past it the oldest not being served is shed", {},
            static_cast<double>(r->max_connections()));
    m.counter("tessera_server_connections_shed_total",
              "Connections closed to make room for a new one (idle, slow or silent clients)", {},
              static_cast<double>(r->shed_connections()));
    m.counter("tessera_server_thread_start_failures_total",
              "HTTP worker threads that could not be started (pids or memory limit)", {},
              static_cast<double>(pool.start_failures()));
  }
  m.gauge("process_resident_memory_bytes", "Resident set size of this process", {},
          static_cast<double>(resident_bytes()));
  Reply reply{200, m.render(), "text/plain; version=0.0.4; charset=utf-8"};
  if (rc.extra_metrics) rc.extra_metrics(&reply.body);
  return reply;
}

}  // namespace tessera::server
