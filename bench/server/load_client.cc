// tessera_load: a small HTTP load generator for `tessera serve`.
//   closed loop (--rate 0): C connections send back to back -> capacity;
//   open loop (--rate R): request i is due at t0 + i/R whatever the answers,
//   and its latency counts from that due time (no coordinated omission), so
//   0.5x / 1x / 2x of capacity are offered loads, not what the server allows.
// Prints one JSON object: sent, answers by status, transport errors, achieved
// throughput, p50/p90/p99/max latency of the 200s, the 429 rate and the
// server's resident memory (from /metrics) before and after.
#include <httplib.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/run_catching.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string host = "127.0.0.1";
  int port = 3000;
  std::string route = "/embed";
  double rate = 0;        // requests per second; 0: closed loop
  int connections = 32;   // client threads, one keep-alive connection each
  int64_t requests = 2000;
  int inputs = 1;         // texts per request
  int min_words = 8;
  int max_words = 48;
  uint32_t seed = 1;
};

const char* const kWords[] = {
    "the",     "model",   "embeds",    "documents", "into",    "vectors", "attention",
    "server",  "batch",   "queue",     "latency",   "memory",  "token",   "sentence",
    "quick",   "brown",   "fox",       "jumps",     "over",    "lazy",    "dog",
    "search",  "index",   "retrieval", "semantic",  "similar", "meaning", "question",
    "answer",  "paris",   "london",    "numbers",   "1984",    "3.14",    "co-operate",
    "naïve",   "café",    "東京",      "données",   "ελληνικά", "emoji",   "🙂"};

std::string make_body(const Options& o, std::mt19937& rng) {
  std::uniform_int_distribution<int> words(o.min_words, o.max_words);
  std::uniform_int_distribution<size_t> word(0, std::size(kWords) - 1);
  nlohmann::json texts = nlohmann::json::array();
  for (int i = 0; i < o.inputs; ++i) {
    std::string t;
    const int n = words(rng);
    for (int w = 0; w < n; ++w) t += (w ? " " : "") + std::string(kWords[word(rng)]);
    texts.push_back(t);
  }
  const char* field = o.route == "/v1/embeddings" ? "input" : "inputs";
  return nlohmann::json({{field, texts}}).dump();
}

double resident_mib(const Options& o) {
  httplib::Client c(o.host, o.port);
  auto r = c.Get("/metrics");
  if (!r || r->status != 200) return -1;
  const std::string key = "\nprocess_resident_memory_bytes ";
  const size_t at = r->body.find(key);
  if (at == std::string::npos) return -1;
  return std::stod(r->body.substr(at + key.size())) / (1 << 20);
}

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(i), v.end());
  return v[i];
}

// Later occurrences of an option win: run_load.sh appends per-step
// overrides (--min-words ...) to its common arguments.
void add_options(CLI::App& app, Options* o) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--host", o->host, "Server host")->capture_default_str();
  app.add_option("--port", o->port, "Server port")->capture_default_str();
  app.add_option("--route", o->route, "Route to load")
      ->check(CLI::IsMember({"/embed", "/v1/embeddings"}))
      ->capture_default_str();
  app.add_option("--rate", o->rate, "Requests per second (0: closed loop)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--connections", o->connections, "Client threads, one connection each")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--requests", o->requests, "Requests to send")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--inputs", o->inputs, "Texts per request")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--min-words", o->min_words, "Fewest words per text")->capture_default_str();
  app.add_option("--max-words", o->max_words, "Most words per text")->capture_default_str();
  app.add_option("--seed", o->seed, "Random seed of the texts")->capture_default_str();
}

int run_load(int argc, char** argv) {
  Options o;
  CLI::App app{"tessera_load: HTTP load generator for `tessera serve` (prints one JSON object)"};
  add_options(app, &o);
  CLI11_PARSE(app, argc, argv);
  const double rss_before = resident_mib(o);
  std::atomic<int64_t> next{0};
  std::mutex mu;
  std::map<int, int64_t> by_status;
  int64_t transport_errors = 0;
  std::vector<double> latencies;  // seconds, 200s only
  latencies.reserve(static_cast<size_t>(o.requests));

  const Clock::time_point t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < o.connections; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client http(o.host, o.port);
      http.set_keep_alive(true);
      // httplib writes a POST's headers and body apart; with Nagle on, the
      // body waits for the server's delayed ACK of the headers (40 ms on
      // Linux), which a one-connection run measured as 50 ms per request.
      http.set_tcp_nodelay(true);
      http.set_read_timeout(120, 0);
      std::mt19937 rng(o.seed * 7919u + static_cast<uint32_t>(c));
      std::map<int, int64_t> my_status;
      int64_t my_errors = 0;
      std::vector<double> my_latencies;
      for (;;) {
        const int64_t i = next.fetch_add(1);
        if (i >= o.requests) break;
        const std::string body = make_body(o, rng);
        Clock::time_point due = Clock::now();
        if (o.rate > 0) {
          due = t0 + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(static_cast<double>(i) / o.rate));
          std::this_thread::sleep_until(due);
        }
        auto r = http.Post(o.route, body, "application/json");
        const double seconds = std::chrono::duration<double>(Clock::now() - due).count();
        if (!r) {
          ++my_errors;
          continue;
        }
        ++my_status[r->status];
        if (r->status == 200) my_latencies.push_back(seconds);
      }
      std::lock_guard<std::mutex> lock(mu);
      for (const auto& [s, n] : my_status) by_status[s] += n;
      transport_errors += my_errors;
      latencies.insert(latencies.end(), my_latencies.begin(), my_latencies.end());
    });
  }
  for (auto& t : threads) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  const double rss_after = resident_mib(o);

  const int64_t ok = by_status.count(200) ? by_status[200] : 0;
  const int64_t rejected = by_status.count(429) ? by_status[429] : 0;
  nlohmann::json status = nlohmann::json::object();
  for (const auto& [s, n] : by_status) status[std::to_string(s)] = n;
  const double max_latency =
      latencies.empty() ? 0 : *std::max_element(latencies.begin(), latencies.end());
  nlohmann::json out = {
      {"route", o.route},
      {"offered_rate", o.rate},
      {"connections", o.connections},
      {"inputs_per_request", o.inputs},
      {"sent", o.requests},
      {"status", status},
      {"transport_errors", transport_errors},
      {"wall_seconds", wall},
      {"ok_per_second", static_cast<double>(ok) / wall},
      {"rate_429", static_cast<double>(rejected) / static_cast<double>(o.requests)},
      {"p50_ms", 1e3 * percentile(latencies, 0.50)},
      {"p90_ms", 1e3 * percentile(latencies, 0.90)},
      {"p99_ms", 1e3 * percentile(latencies, 0.99)},
      {"max_ms", 1e3 * max_latency},
      {"server_rss_mib_before", rss_before},
      {"server_rss_mib_after", rss_after},
  };
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tessera::run_catching("tessera_load", 1, [&] { return run_load(argc, argv); });
}
