// The route handlers, free of HTTP plumbing: each takes the request body and
// returns the status and JSON (or Prometheus text) to send. http_server.cc
// wires them to cpp-httplib, adds authentication, limits and metrics.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "pipeline/embedding_model.h"
#include "server/batcher.h"
#include "server/bounded_answer.h"
#include "server/inputs.h"
#include "server/request_parse.h"
#include "server/served_model.h"
#include "tessera/model_kind.h"
#include "server/server_metrics.h"
#include "server/server_options.h"

namespace tessera::server {

class ConnectionReactor;

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  int retry_after_seconds = 0;  // > 0: a Retry-After header
  // The memory budget's share for a large body (BoundedAnswer); held until
  // the answer is sent.
  Reservation memory;
};

// Appends Prometheus families owned elsewhere (profiler, dispatcher, memory).
using MetricsSource = std::function<void(std::string* out)>;

struct RouteContext {
  pipeline::EmbeddingModel& model;
  const ModelInfo& model_info;
  Batcher& batcher;
  TrackingAllocator& alloc;  // the server's: --memory-budget
  ServerMetrics& metrics;
  const ServerOptions& options;
  const ServingInfo& info;
  MetricsSource extra_metrics;
  const std::atomic<bool>& draining;
  // The HTTP server's connections and worker threads.
  const std::atomic<const ConnectionReactor*>& connections;
};

Reply handle_embed(RouteContext& rc, std::string_view body);  // POST /embed
// POST / and /invocations: TEI serves an embedding model's default task,
// /embed, there. A body of /similarity's shape ({"inputs": {"source_sentence",
// "sentences"}}, which /embed refuses) is answered as /similarity, so that a
// client posting every task to one URL (huggingface_hub's
// InferenceClient(url).sentence_similarity) is served too. Such bodies are
// parsed twice; /embed itself is not.
Reply handle_default_task(RouteContext& rc, std::string_view body);
// OpenAI (routes_openai.cc): POST /v1/embeddings (and /embeddings), GET
// /v1/models and /v1/models/{id}: the served model (--served-model-name).
Reply handle_openai_embeddings(RouteContext& rc, std::string_view body);  // POST /v1/embeddings
Reply handle_openai_models(RouteContext& rc);                             // GET /v1/models
Reply handle_openai_model(RouteContext& rc, std::string_view id);         // GET /v1/models/{id}
// Cohere v2 (routes_cohere.cc): POST /v2/embed, with quantized output.
Reply handle_cohere_embed(RouteContext& rc, std::string_view body);     // POST /v2/embed
Reply handle_embed_documents(RouteContext& rc, std::string_view body);  // POST /embed_documents
Reply handle_tokenize(RouteContext& rc, std::string_view body);         // POST /tokenize
Reply handle_decode(RouteContext& rc, std::string_view body);           // POST /decode
Reply handle_similarity(RouteContext& rc, std::string_view body);       // POST /similarity
Reply handle_embed_all(RouteContext& rc, std::string_view body);        // POST /embed_all
// TEI's routes for models with a head (routes_heads.cc): a classifier or
// re-ranker on /predict, a re-ranker on /rerank, SPLADE on /embed_sparse;
// TEI's 424 for a model of another kind.
Reply handle_predict(RouteContext& rc, std::string_view body);       // POST /predict
Reply handle_rerank(RouteContext& rc, std::string_view body);        // POST /rerank
Reply handle_embed_sparse(RouteContext& rc, std::string_view body);  // POST /embed_sparse
Reply handle_health(RouteContext& rc);   // GET /health, and GET / and /ping as TEI
Reply handle_info(RouteContext& rc);     // GET /info
Reply handle_metrics(RouteContext& rc);  // GET /metrics

// A BoundedAnswer's outcome as a reply: its text (200) or its error.
Reply bounded_reply(BoundedAnswer& answer);

// TEI's 424 (Backend) when the served model is not of kind `a` or `b`: the
// message says what the route needs and what the model is. no_error() else.
ApiError needs_model_kind(const RouteContext& rc, ModelKind a, ModelKind b, const char* tei_message,
                          const char* route);
// The check of every dense-embedding route (TEI: "Model is not an embedding model").
ApiError needs_embedding_model(const RouteContext& rc, const char* route);

// The request limits of the body parsers, from the server options.
ParseLimits parse_limits(const RouteContext& rc);
// A TEI-shaped error reply ({"error", "error_type", "field"}, Retry-After).
Reply tei_error_reply(const ApiError& e);
// OpenAI's ({"error": {"message", "type", "param", "code"}}) and Cohere's
// ({"message"}) error replies; a refused request (TEI's 422, a route's 413)
// is their 400.
Reply openai_error_reply(const ApiError& e);
Reply cohere_error_reply(const ApiError& e);

// The name clients use for the model: --served-model-name, else its id.
const std::string& served_model_name(const RouteContext& rc);
// OpenAI's 404 model_not_found (`field` names the request field) unless
// `model` is absent or the served model's name.
ApiError check_model_name(const RouteContext& rc, const std::optional<std::string>& model,
                          const std::string& field);

// TEI's text options as a Framing: the truncation asked for and the prompt
// of their prompt_name (named `prompt_field` in errors).
ApiError tei_framing(const RouteContext& rc, const TextRequestOptions& text,
                     const std::string& prompt_field, Framing* out);
// How a route asks for over-long inputs to be cut.
inline constexpr char kTeiTruncateHint[] =
    "send truncate=true (or start the server with --auto-truncate) to cut it";

// Submits the prepared sequences to the batcher and waits for their rows:
// the answer every embedding route gives to a full queue (429), a shutdown
// (503), the memory budget (503), a model failure (424, naming the input)
// or non-finite rows (500). `row_name(i)` names input i in messages, and
// row_name(-1) the whole list.
using RowName = std::function<std::string(int64_t row)>;
ApiError run_job(RouteContext& rc, PreparedInputs& inputs, const RowName& row_name,
                 std::shared_ptr<EmbedJob>* job, JobOutput output = JobOutput::kPooled);
// The same where input i is field[i] ("inputs", "documents").
ApiError run_job(RouteContext& rc, PreparedInputs& inputs, const std::string& field,
                 std::shared_ptr<EmbedJob>* job, JobOutput output = JobOutput::kPooled);

}  // namespace tessera::server
