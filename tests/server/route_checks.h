// Checks shared by the HTTP route tests: small limits, a row's values, an
// error's status, content type and the field it names.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/server_options.h"

namespace tessera::server::testing {

inline ServerOptions small_limits() {
  ServerOptions o;
  o.batching.max_batch_tokens = 64;
  o.batching.max_concurrent_requests = 8;
  o.max_client_batch_size = 4;
  o.payload_limit_bytes = 4096;
  return o;
}

inline void expect_row(const nlohmann::json& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size()) << got.dump();
  for (size_t k = 0; k < want.size(); ++k) EXPECT_FLOAT_EQ(got[k].get<float>(), want[k]) << k;
}

// POSTs a JSON body and expects a 200; the parsed answer (null otherwise).
inline nlohmann::json post_expecting_ok(httplib::Client& client, const char* path,
                                        const std::string& body) {
  auto r = client.Post(path, body, "application/json");
  EXPECT_TRUE(r) << path;
  if (!r) return nlohmann::json();
  EXPECT_EQ(r->status, 200) << path << " " << r->body;
  return r->status == 200 ? nlohmann::json::parse(r->body) : nlohmann::json();
}

// Checks status, JSON content type, and that the body names `field`.
inline void expect_error(const httplib::Result& r, int status, const std::string& field) {
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, status) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  const nlohmann::json j = nlohmann::json::parse(r->body);
  if (j["error"].is_object()) {  // OpenAI shape
    EXPECT_EQ(j["error"]["param"], field) << r->body;
  } else if (!field.empty()) {
    EXPECT_EQ(j["field"], field) << r->body;
    EXPECT_NE(j["error"].get<std::string>().find(field), std::string::npos) << r->body;
  }
}

}  // namespace tessera::server::testing
