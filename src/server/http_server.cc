#include "server/http_server.h"

#include <httplib.h>
#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "server/auth.h"
#include "server/connection_reactor.h"
#include "server/connection_stream.h"
#include "server/json_out.h"
#include "server/limited_http_server.h"
#include "server/request_budget.h"

namespace tessera::server {

namespace {

// Pending connections the kernel queues (see LimitedHttpServer::raise_backlog).
constexpr int kListenBacklog = 1024;
// Requests served on one keep-alive connection before it is closed.
constexpr size_t kKeepAliveRequests = 1000;
// Chunked bodies are capped by their raw bytes, chunk framing included: a
// body of --payload-limit bytes in chunks of a few KiB fits in this slack.
constexpr size_t kMinBodyFramingSlack = 64 << 10;

ConnectionLimits connection_limits(const ServerOptions& o) {
  ConnectionLimits l;
  l.read_timeout_seconds = o.read_timeout_seconds;
  l.write_timeout_seconds = o.write_timeout_seconds;
  l.idle_timeout_seconds = o.keep_alive_timeout_seconds;
  l.max_header_bytes = o.max_header_bytes;
  l.max_line_bytes = CPPHTTPLIB_HEADER_MAX_LENGTH;
  l.payload_limit_bytes = o.payload_limit_bytes;
  l.max_body_bytes =
      o.payload_limit_bytes + std::max(kMinBodyFramingSlack, o.payload_limit_bytes / 4);
  return l;
}

// cpp-httplib takes whole seconds for these; they only bound each recv() or
// send() under our stream's own deadlines, so round up.
time_t whole_seconds(double s) { return static_cast<time_t>(std::ceil(s)); }

// The declared body length, if the request declares a valid one.
std::optional<uint64_t> content_length(const httplib::Request& req) {
  if (!req.has_header("Content-Length")) return std::nullopt;
  const std::string v = req.get_header_value("Content-Length");
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return n;
}

bool has_body(const httplib::Request& req) {
  const std::optional<uint64_t> n = content_length(req);
  return (n && *n > 0) || req.has_header("Transfer-Encoding");
}

struct RouteName {
  const char* method;
  const char* path;
};
// GET /v1/models/{id}: its metrics label and its pattern (an id may hold
// slashes: "BAAI/bge-small-en-v1.5").
constexpr char kModelRoute[] = "/v1/models/{id}";
constexpr char kModelPrefix[] = "/v1/models/";
// Every route served: TEI's for an embedding model (POST / and /invocations
// are its default task, /embed; GET / and /ping its health), OpenAI's, and
// tessera's own (/embed_documents).
constexpr RouteName kRoutes[] = {{"POST", "/embed"},
                                 {"POST", "/embed_all"},
                                 {"POST", "/similarity"},
                                 {"POST", "/tokenize"},
                                 {"POST", "/decode"},
                                 {"POST", "/v1/embeddings"},
                                 {"POST", "/embeddings"},
                                 {"GET", "/v1/models"},
                                 {"GET", kModelRoute},
                                 {"POST", "/v2/embed"},
                                 {"POST", "/embed_documents"},
                                 {"POST", "/"},
                                 {"POST", "/invocations"},
                                 {"POST", "/predict"},
                                 {"POST", "/rerank"},
                                 {"POST", "/embed_sparse"},
                                 {"GET", "/health"},
                                 {"GET", "/"},
                                 {"GET", "/ping"},
                                 {"GET", "/info"},
                                 {"GET", "/metrics"}};

// Metrics label of a path: a known route, else "other" (bounded cardinality).
std::string route_label(const std::string& path) {
  for (const RouteName& r : kRoutes) {
    if (path == r.path) return r.path;
  }
  if (path.rfind(kModelPrefix, 0) == 0) return kModelRoute;
  return "other";
}

std::string route_list() {
  std::string list;
  for (const RouteName& r : kRoutes) {
    list += std::string(list.empty() ? "" : ", ") + r.method + " " + r.path;
  }
  return list;
}

// TEI's health routes are public: no API key needed.
bool is_public(std::string_view method, std::string_view path) {
  return method == "GET" && (path == "/health" || path == "/" || path == "/ping");
}

// File descriptors kept free of connections: sockets accepted and not yet
// taken by the reader (at most 32), the epoll and its wake-up descriptor,
// the listening socket, files opened while serving (/proc for /metrics).
constexpr size_t kReservedDescriptors = 64;

// Connections held at once: --max-connections, within the descriptor limit
// (past it accept() would fail and new clients wait; past max_connections
// the oldest idle or slow connection is shed instead).
size_t connection_cap(const ServerOptions& o) {
  rlimit fds{};
  size_t by_fds = 1 << 20;
  if (::getrlimit(RLIMIT_NOFILE, &fds) == 0 && fds.rlim_cur != RLIM_INFINITY) {
    by_fds = fds.rlim_cur > 2 * kReservedDescriptors ? fds.rlim_cur - kReservedDescriptors
                                                     : fds.rlim_cur / 2;
  }
  return o.max_connections > 0 ? std::min(o.max_connections, by_fds) : by_fds;
}

bool is_openai_route(const std::string& path) {
  return path.rfind("/v1/", 0) == 0 || path == "/embeddings";
}

bool is_cohere_route(const std::string& path) { return path.rfind("/v2/", 0) == 0; }

std::string error_body_for(const std::string& path, const ApiError& e) {
  if (is_openai_route(path)) return openai_error_body(e);
  return is_cohere_route(path) ? cohere_error_body(e) : tei_error_body(e);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

class EmbeddingServer::Impl {
 public:
  Impl(pipeline::EmbeddingModel& model, ModelInfo model_info, Context& ctx,
       TrackingAllocator& alloc, ServerOptions options, ServingInfo info, MetricsSource extra)
      : options_(std::move(options)),
        info_(std::move(info)),
        model_info_(std::move(model_info)),
        batcher_(model, ctx, alloc, options_.batching,
                 [this](const BatchReport& r) { metrics_.observe_batch(r); }),
        rc_{model,    model_info_, batcher_,         alloc,     metrics_,
            options_, info_,       std::move(extra), draining_, connections_},
        limits_(connection_limits(options_)),
        http_(
            limits_, connection_cap(options_), http_thread_cap(options_), alloc,
            [this](const framing::HeadVerdict& head, std::string_view text) {
              return read_body_first(head, text);
            },
            [this](int status) { metrics_.count_response("other", status, 0); },
            options_.start_thread) {
    if (!options_.api_key.empty()) auth_ = ApiKeyCheck(options_.api_key);
    if (info_.started_at == 0) {
      info_.started_at = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
    }
    connections_ = &http_.reactor();
    configure();
  }

  Status bind(int* port) {
    const int p = options_.port == 0
                      ? http_.bind_to_any_port(options_.host)
                      : (http_.bind_to_port(options_.host, options_.port) ? options_.port : -1);
    if (p < 0) {
      return unavailable("cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                         " (address in use, not a local address, or no permission)");
    }
    if (!http_.raise_backlog(kListenBacklog)) {
      return internal_error("listen(backlog " + std::to_string(kListenBacklog) + ") failed");
    }
    *port = p;
    return Status::Ok();
  }

  Status serve() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      serving_ = !stop_requested_;
    }
    if (serving_) {
      if (Status s = http_.start(); !s.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        serve_done_ = true;
        batcher_.shutdown();
        return s;
      }
    }
    const bool ok = serving_ ? http_.listen_after_bind() : true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      serve_done_ = true;
    }
    // Every connection thread has returned: nothing can be submitted any
    // more. The batcher answers whatever is still queued, then stops.
    batcher_.shutdown();
    std::lock_guard<std::mutex> lock(mu_);
    if (!ok && !stop_requested_) return internal_error("the listening socket failed");
    return Status::Ok();
  }

  void stop() {
    // Requests still working past the drain deadline stop (RequestBudget).
    const int64_t deadline =
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            (std::chrono::steady_clock::now() + seconds(options_.drain_timeout_seconds))
                .time_since_epoch())
            .count();
    int64_t unset = RequestBounds::kNotStopping;
    drain_deadline_ns_.compare_exchange_strong(unset, deadline);
    draining_ = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_requested_) return;
      stop_requested_ = true;
      if (!serving_) return;  // serve() has not started: it will not listen
    }
    // serve() may be between its check and the accept loop: wait for it.
    constexpr auto kPoll = std::chrono::milliseconds(1);
    while (!http_.is_running()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (serve_done_) return;
      }
      std::this_thread::sleep_for(kPoll);
    }
    http_.stop();
  }

  const Batcher& batcher() const { return batcher_; }

 private:
  using Route = Reply (*)(RouteContext&, std::string_view);
  using GetRoute = Reply (*)(RouteContext&);

  void configure() {
    http_.set_payload_max_length(options_.payload_limit_bytes);
    http_.set_tcp_nodelay(true);
    http_.set_keep_alive_max_count(kKeepAliveRequests);
    http_.set_keep_alive_timeout(whole_seconds(options_.keep_alive_timeout_seconds));
    http_.set_read_timeout(whole_seconds(options_.read_timeout_seconds));
    http_.set_write_timeout(whole_seconds(options_.write_timeout_seconds));
    http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      return before_body(req, res);
    });
    http_.set_error_handler(httplib::Server::HandlerWithResponse(
        [this](const httplib::Request& req, httplib::Response& res) {
          return on_error(req, res);
        }));
    http_.set_exception_handler(
        [this](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
          std::string what = "unknown exception";
          try {
            std::rethrow_exception(std::move(ep));
          } catch (const std::exception& e) {
            what = e.what();
          } catch (...) {
          }
          send(req, res,
               {500, error_body_for(req.path, {500, "Internal", "", "internal error: " + what})},
               route_label(req.path), 0);
        });
    post("/embed", handle_embed);
    post("/", handle_default_task);
    post("/invocations", handle_default_task);
    post("/embed_all", handle_embed_all);
    post("/similarity", handle_similarity);
    post("/v1/embeddings", handle_openai_embeddings);
    post("/embeddings", handle_openai_embeddings);
    post("/embed_documents", handle_embed_documents);
    post("/v2/embed", handle_cohere_embed);
    get("/v1/models", handle_openai_models);
    http_.Get("/v1/models/(.+)", [this](const httplib::Request& req, httplib::Response& res) {
      const auto start = std::chrono::steady_clock::now();
      Reply reply = handle_openai_model(rc_, req.matches[1].str());
      send(req, res, std::move(reply), kModelRoute, seconds_since(start));
    });
    post("/tokenize", handle_tokenize);
    post("/decode", handle_decode);
    post("/predict", handle_predict);
    post("/rerank", handle_rerank);
    post("/embed_sparse", handle_embed_sparse);
    get("/health", handle_health);
    get("/", handle_health);
    get("/ping", handle_health);
    get("/info", handle_info);
    get("/metrics", handle_metrics);
  }

  void post(const char* path, Route fn) {
    http_.Post(path, [this, path, fn](const httplib::Request& req, httplib::Response& res) {
      const auto start = std::chrono::steady_clock::now();
      RequestBudget budget({options_.request_cpu_seconds, &drain_deadline_ns_},
                           current_connection());
      const RequestBudgetScope scope(&budget);
      // A chunked body is not checked against the limit by cpp-httplib; our
      // stream caps its raw bytes, this the payload itself.
      Reply reply = req.body.size() > options_.payload_limit_bytes
                        ? Reply{413, error_body_for(req.path, body_too_large(req.body.size()))}
                        : fn(rc_, req.body);
      metrics_.count_request_work(budget.cpu_seconds_used(), budget.stop_label());
      send(req, res, std::move(reply), path, seconds_since(start));
    });
  }

  void get(const char* path, GetRoute fn) {
    http_.Get(path, [this, path, fn](const httplib::Request& req, httplib::Response& res) {
      const auto start = std::chrono::steady_clock::now();
      Reply reply = fn(rc_);
      send(req, res, std::move(reply), path, seconds_since(start));
    });
  }

  void send(const httplib::Request& /*req*/, httplib::Response& res, Reply reply,
            const std::string& route, double seconds) {
    res.status = reply.status;
    res.body = std::move(reply.body);
    res.set_header("Content-Type", reply.content_type);
    if (reply.retry_after_seconds > 0) {
      res.set_header("Retry-After", std::to_string(reply.retry_after_seconds));
    }
    // A large answer's memory stays counted until it is sent.
    if (ConnectionStream* c = current_connection(); c != nullptr && reply.memory.bytes() > 0) {
      c->hold(std::move(reply.memory));
    }
    metrics_.count_response(route, reply.status, seconds);
  }

  // The reactor reads a body only for a request that will be served: an
  // unauthenticated one is answered 401 after its head, body unread.
  bool read_body_first(const framing::HeadVerdict& head, std::string_view head_text) const {
    const std::string_view target(head.target);
    return !auth_.enabled() || is_public(head.method, target.substr(0, target.find('?'))) ||
           auth_.allows(framing::field_value(head_text, "Authorization"));
  }

  ApiError body_too_large(uint64_t bytes) const {
    return too_large_error(
        "body", "the body has " + std::to_string(bytes) + " bytes; this server takes at most " +
                    std::to_string(options_.payload_limit_bytes) + " (--payload-limit)");
  }

  // Runs before the body is read: what is refused here is refused without
  // reading it, and the connection closes after the answer (the unread body
  // must not be taken for the next request).
  httplib::Server::HandlerResponse before_body(const httplib::Request& req,
                                               httplib::Response& res) {
    // (A declared length over --payload-limit never gets here: the reactor
    // answers it 413 from the head.)
    if (!auth_.enabled() || is_public(req.method, req.path)) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    if (auth_.allows(req.get_header_value("Authorization"))) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    const ApiError e{401, "Unauthorized", "Authorization",
                     req.has_header("Authorization")
                         ? "Authorization: the bearer token does not match --api-key"
                         : "Authorization header missing: send 'Authorization: Bearer <key>'"};
    res.set_header("WWW-Authenticate", "Bearer");
    refuse_before_body(req, res, {401, error_body_for(req.path, e)});
    return httplib::Server::HandlerResponse::Handled;
  }

  void refuse_before_body(const httplib::Request& req, httplib::Response& res, Reply reply) {
    if (has_body(req)) {
      if (ConnectionStream* c = current_connection()) c->close_after_response();
      res.set_header("Connection", "close");
    }
    send(req, res, std::move(reply), route_label(req.path), 0);
  }

  // Errors cpp-httplib produces itself (no route, body over the limit, a
  // malformed request) get a JSON body too. Our own replies already have one.
  httplib::Server::HandlerResponse on_error(const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    ApiError e;
    if (res.status == 413) {
      e = body_too_large(content_length(req).value_or(0));
    } else if (res.status == 404) {
      e = {404, "NotFound", "",
           "no route " + req.method + " " + req.path + "; routes: " + route_list()};
    } else {
      e = {res.status, "Validation", "",
           "malformed HTTP request (status " + std::to_string(res.status) + ")"};
    }
    send(req, res, {res.status, error_body_for(req.path, e)}, route_label(req.path), 0);
    return httplib::Server::HandlerResponse::Handled;
  }

  ServerOptions options_;
  ServingInfo info_;
  ModelInfo model_info_;
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> drain_deadline_ns_{RequestBounds::kNotStopping};
  std::atomic<const ConnectionReactor*> connections_{nullptr};
  ServerMetrics metrics_;  // before batcher_: its thread reports here
  Batcher batcher_;
  RouteContext rc_;
  ApiKeyCheck auth_;
  const ConnectionLimits limits_;  // before http_: its connections read these
  LimitedHttpServer http_;

  std::mutex mu_;
  bool serving_ = false;
  bool stop_requested_ = false;
  bool serve_done_ = false;
};

EmbeddingServer::EmbeddingServer(pipeline::EmbeddingModel& model, ModelInfo model_info,
                                 Context& ctx, TrackingAllocator& alloc, ServerOptions options,
                                 ServingInfo info, MetricsSource extra_metrics)
    : impl_(std::make_unique<Impl>(model, std::move(model_info), ctx, alloc, std::move(options),
                                   std::move(info), std::move(extra_metrics))) {}

EmbeddingServer::~EmbeddingServer() = default;

Status EmbeddingServer::bind(int* port) { return impl_->bind(port); }
Status EmbeddingServer::serve() { return impl_->serve(); }
void EmbeddingServer::stop() { impl_->stop(); }
const Batcher& EmbeddingServer::batcher() const { return impl_->batcher(); }

}  // namespace tessera::server
