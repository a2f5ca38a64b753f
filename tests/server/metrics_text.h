// Reading the server's /metrics in tests: one sample's value, and waiting
// for a batch's report to arrive.
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>

namespace tessera::server::testing {

// The value of an unlabelled sample in Prometheus text, or -1.
inline double metric(const std::string& text, const std::string& name) {
  const std::string key = "\n" + name + " ";
  const size_t at = text.find(key);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + key.size()));
}

// GET /metrics until ready(body) holds or 5 s have passed; the last answer.
// The batcher reports a batch after its last part has answered (batcher.cc,
// run_batch), so a client holding its answer can read /metrics a moment
// before the report is in.
template <class Ready>
httplib::Result await_metrics(httplib::Client& client, Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  httplib::Result r = client.Get("/metrics");
  while (r && !ready(r->body) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    r = client.Get("/metrics");
  }
  return r;
}

}  // namespace tessera::server::testing
