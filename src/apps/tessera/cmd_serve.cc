// tessera serve [--model DIR] [--host H] [--port P] [--api-key KEY] [limits...]
// The embedding HTTP service (TEI- and OpenAI-compatible routes) over the
// same encoder, dispatcher, allocator and profiler as every other command.
// SIGINT / SIGTERM: stop accepting, answer what was accepted, exit 0; a
// second signal exits at once (130).
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "attention/dispatch/dispatch_metrics.h"
#include "commands.h"
#include "model/encoder.h"
#include "model_options.h"
#include "pipeline/encoder_model.h"
#include "quantization_ranges.h"
#include "runtime/machine_info.h"
#include "runtime/signal_watcher.h"
#include "server/http_server.h"

namespace tessera::cli {

namespace {

struct ServeFlags {
  ModelFlags model;
  std::string payload_limit = "2M";
  std::string max_header_bytes = "32K";
  std::string max_response_bytes = "16M";
  std::string quantization_ranges;      // --quantization-ranges FILE.npy
  bool max_batch_tokens_given = false;  // else raised to a longer model's max_length
  server::ServerOptions options;
};

constexpr int kExitSecondSignal = 130;

Status check_limits(const server::ServerOptions& o, int max_length) {
  if (o.batching.max_batch_tokens < max_length) {
    return invalid_argument("--max-batch-tokens = " + std::to_string(o.batching.max_batch_tokens) +
                            " is below the model's max_length " + std::to_string(max_length) +
                            ": one full-length input would never fit in a batch");
  }
  if (o.batching.max_concurrent_requests == 0) {
    return invalid_argument("--max-concurrent-requests must be at least 1");
  }
  if (o.max_client_batch_size == 0) {
    return invalid_argument("--max-client-batch-size must be at least 1");
  }
  // Below this not even a request line and a few headers fit.
  constexpr size_t kMinHeaderBytes = 1024;
  if (o.max_header_bytes < kMinHeaderBytes) {
    return invalid_argument("--max-header-bytes = " + std::to_string(o.max_header_bytes) +
                            " is below " + std::to_string(kMinHeaderBytes) +
                            ": ordinary requests would be refused");
  }
  return Status::Ok();
}

std::string names_of(const Registry& registry, std::vector<std::string>* out) {
  std::string joined;
  for (Backend* b : registry.backends()) {
    out->emplace_back(b->name());
    joined += (joined.empty() ? "" : ",") + std::string(b->name());
  }
  return joined;
}

// Every connection is a descriptor and the default soft limit is often 1024:
// raise it to the hard limit, so the connection cap (past which the oldest
// idle or slow connection is shed) is set by memory, not by a default.
void raise_descriptor_limit() {
  rlimit fds{};
  if (::getrlimit(RLIMIT_NOFILE, &fds) != 0 || fds.rlim_cur >= fds.rlim_max) return;
  constexpr rlim_t kEnough = 1 << 20;
  fds.rlim_cur = std::min(fds.rlim_max, kEnough);
  (void)::setrlimit(RLIMIT_NOFILE, &fds);
}

int run_serve(AppState& state, ServeFlags& flags) {
  // Before any thread exists, so that every thread inherits the mask and the
  // watcher alone receives SIGINT / SIGTERM.
  SignalWatcher::block_stop_signals();
  if (Status s = state.init(); !s.ok()) return fail(s);
  server::ServerOptions& o = flags.options;
  raise_descriptor_limit();
  if (Status s = parse_byte_size(flags.payload_limit, "--payload-limit", &o.payload_limit_bytes);
      !s.ok()) {
    return fail(s);
  }
  if (Status s = parse_byte_size(flags.max_header_bytes, "--max-header-bytes", &o.max_header_bytes);
      !s.ok()) {
    return fail(s);
  }
  if (Status s =
          parse_byte_size(flags.max_response_bytes, "--max-response-bytes", &o.max_response_bytes);
      !s.ok()) {
    return fail(s);
  }
  std::string dir;
  std::unique_ptr<model::Encoder> encoder;
  if (Status s = load_encoder(flags.model, state.context(), &dir, &encoder); !s.ok()) {
    return fail(s);
  }
  const std::string weights = describe_weights(*encoder);
  const server::ModelInfo model_info = server::describe_model(*encoder);
  // The pipeline's model: the same seam `tessera embed` embeds through.
  pipeline::EncoderModel model(std::move(encoder), state.dispatcher());
  if (!flags.max_batch_tokens_given) {
    o.batching.max_batch_tokens =
        std::max<int64_t>(o.batching.max_batch_tokens, model_info.max_length);
  }
  if (Status s = check_limits(o, model_info.max_length); !s.ok()) return fail(s);
  if (!flags.quantization_ranges.empty()) {
    if (Status s = read_quantization_ranges(flags.quantization_ranges, "--quantization-ranges",
                                            &o.quantization_ranges, &o.quantization_dims);
        !s.ok()) {
      return fail(s);
    }
    if (o.quantization_dims > model_info.dim) {
      return fail(invalid_argument(
          "--quantization-ranges " + flags.quantization_ranges + " holds " +
          std::to_string(o.quantization_dims) + " dimensions but model " + model_info.id +
          " outputs " + std::to_string(model_info.dim) + ": calibrate on its embeddings"));
    }
  }
  if (o.served_model_name.empty()) o.served_model_name = model_info.id;

  server::ServingInfo info;
  info.version = machine_info().tessera_version;
  info.attention_policy = state.policy().to_string();
  const std::string backends = names_of(state.registry(), &info.backends);
  Context& ctx = state.context();
  Dispatcher& dispatcher = state.dispatcher();
  server::EmbeddingServer http(
      model, model_info, ctx, ctx.allocator(), o, info,
      [&ctx, &dispatcher](std::string* out) { *out += prometheus_text(ctx, &dispatcher); });
  int port = 0;
  if (Status s = http.bind(&port); !s.ok()) return fail(s);

  std::printf(
      "tessera serve: listening on http://%s:%d\n"
      "  model %s (%s, served as %s): dim %d, max_length %d, weights %s\n"
      "  attention %s over [%s]; max_batch_tokens %lld, max_concurrent_requests %zu, "
      "max_client_batch_size %zu, auth %s\n",
      o.host.c_str(), port, model_info.id.c_str(), dir.c_str(), o.served_model_name.c_str(),
      model_info.dim, model_info.max_length, weights.c_str(), info.attention_policy.c_str(),
      backends.c_str(), static_cast<long long>(o.batching.max_batch_tokens),
      o.batching.max_concurrent_requests, o.max_client_batch_size,
      o.api_key.empty() ? "off" : "bearer");
  std::fflush(stdout);

  int signals = 0;
  SignalWatcher watcher([&](int signo) {
    if (++signals > 1) {
      std::fprintf(stderr, "tessera serve: second signal: exiting now\n");
      std::_Exit(kExitSecondSignal);
    }
    std::fprintf(stderr,
                 "tessera serve: %s: no new connections; answering the %zu accepted "
                 "requests, then exiting\n",
                 signo == SIGINT ? "SIGINT" : "SIGTERM", http.batcher().in_flight());
    http.stop();
  });
  const Status served = http.serve();
  if (!served.ok()) return fail(served);
  std::fprintf(stderr, "tessera serve: stopped\n");
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, AppState& state) {
  auto flags = std::make_shared<ServeFlags>();
  server::ServerOptions& o = flags->options;
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Embedding HTTP service. TEI: POST /embed (and / and /invocations), /embed_all (token\n"
      "states), /similarity, /tokenize, /decode; GET /health (and / and /ping), /info,\n"
      "/metrics. OpenAI: POST /v1/embeddings (and /embeddings), GET /v1/models. Cohere:\n"
      "POST /v2/embed (float, base64, int8, uint8, binary, ubinary). tessera: POST\n"
      "/embed_documents (chunks and vectors as `tessera embed` writes them). Requests are\n"
      "batched dynamically; past --max-concurrent-requests the answer is 429 at once. See\n"
      "docs/SERVING.md.");
  add_model_options(cmd, &flags->model);
  cmd->add_option("--host", o.host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", o.port, "TCP port (0: any free port, printed at start)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--api-key", o.api_key,
                  "Require 'Authorization: Bearer KEY' on every route but GET /health, / and /ping")
      ->envname("TESSERA_API_KEY");
  cmd->add_option("--max-batch-tokens", o.batching.max_batch_tokens,
                  "Token budget of one batch (>= the model's max_length; unset: the default,\n"
                  "or the model's max_length when that is larger)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->each([flags](const std::string&) { flags->max_batch_tokens_given = true; });
  cmd->add_option("--max-batch-sequences", o.batching.max_batch_sequences,
                  "Sequences per batch (0: only the token budget; 1: batching off)")
      ->capture_default_str();
  cmd->add_option("--max-concurrent-requests", o.batching.max_concurrent_requests,
                  "Embedding requests admitted at once; more are answered 429")
      ->capture_default_str();
  cmd->add_option("--max-client-batch-size", o.max_client_batch_size,
                  "Texts in one request; more: 413")
      ->capture_default_str();
  cmd->add_option("--payload-limit", flags->payload_limit, "Request body limit (K/M/G); more: 413")
      ->capture_default_str();
  cmd->add_option("--max-response-bytes", flags->max_response_bytes,
                  "One answer's body (K/M/G): /tokenize and /embed_all answer many times their\n"
                  "request; more: 413. Answers being sent also count against --memory-budget")
      ->capture_default_str();
  cmd->add_option("--served-model-name", o.served_model_name,
                  "The model's name on the OpenAI and Cohere routes: `model` must be it (else\n"
                  "404 model_not_found) and GET /v1/models lists it (default: the model\n"
                  "folder's name)");
  cmd->add_option("--quantization-ranges", flags->quantization_ranges,
                  "Float32 .npy of shape (2, dims): per-dimension min and max of calibration\n"
                  "embeddings, for int8 / uint8 output on POST /v2/embed (embedding_types);\n"
                  "its dims must equal the output_dimension asked for")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--auto-truncate", o.auto_truncate,
                "Truncate over-long inputs by default (else 422 unless the request sets "
                "truncate)");
  // Seconds, from a millisecond to a day: a deadline must be representable.
  const CLI::Range kTimeoutRange(1e-3, 86400.0);
  cmd->add_option("--read-timeout", o.read_timeout_seconds,
                  "Seconds a client has to send a whole request (headers and body) from its\n"
                  "first byte; slower: 408 and the connection is closed (slowloris)")
      ->capture_default_str()
      ->check(kTimeoutRange);
  cmd->add_option("--write-timeout", o.write_timeout_seconds,
                  "Seconds a client has to take a whole response; slower: disconnected")
      ->capture_default_str()
      ->check(kTimeoutRange);
  cmd->add_option("--keep-alive-timeout", o.keep_alive_timeout_seconds,
                  "Seconds an idle kept-alive connection stays open")
      ->capture_default_str()
      ->check(kTimeoutRange);
  cmd->add_option("--request-cpu-limit", o.request_cpu_seconds,
                  "CPU seconds one request may spend tokenizing its texts; more: stopped with\n"
                  "413 (0: no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--drain-timeout", o.drain_timeout_seconds,
                  "Seconds after SIGTERM/SIGINT that requests still working are stopped (503)\n"
                  "so that the server exits in time")
      ->capture_default_str()
      ->check(kTimeoutRange);
  cmd->add_option("--max-header-bytes", flags->max_header_bytes,
                  "Request line and headers (K/M); more: 431 (one line over 8K: 431, or 414\n"
                  "for the request line)")
      ->capture_default_str();
  cmd->add_option("--http-threads", o.http_threads,
                  "Cap on HTTP worker threads, started on demand; a worker serves one whole\n"
                  "request at a time (0: the larger of 1024 and max-concurrent-requests + 16)")
      ->capture_default_str();
  cmd->add_option("--max-connections", o.max_connections,
                  "Connections held at once, idle or arriving ones included; past it the oldest\n"
                  "one not being served is closed (0: what the descriptor limit allows)")
      ->capture_default_str();
  cmd->callback([&state, flags] { exit_code = run_serve(state, *flags); });
}

}  // namespace tessera::cli
