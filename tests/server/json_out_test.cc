// Response encoding: float text round trip, base64 (RFC 4648 vectors), error bodies.
#include "server/json_out.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "server/auth.h"

namespace tessera::server {
namespace {

TEST(JsonOut, FloatRowsReadBackBitIdentical) {
  const float row[] = {0.0f,   -0.0f,       1.0f,      0.1f, -3.4028235e38f, 1.17549435e-38f,
                       1e-45f, 0.33333334f, 123456.78f};
  const int64_t n = sizeof(row) / sizeof(row[0]);
  std::string text;
  append_float_row(row, n, &text);
  ASSERT_EQ(nlohmann::json::parse(text).size(), static_cast<size_t>(n));
  // Each number, read back as a float, is the same float (sign of zero too).
  const char* p = text.c_str() + 1;
  for (int64_t i = 0; i < n; ++i) {
    char* end = nullptr;
    const float back = std::strtof(p, &end);
    ASSERT_NE(end, p) << text;
    EXPECT_EQ(std::bit_cast<uint32_t>(back), std::bit_cast<uint32_t>(row[i])) << i << ": " << text;
    p = end + 1;
  }
  EXPECT_NE(text.find("0.1,"), std::string::npos) << "shortest form expected: " << text;
}

TEST(JsonOut, EmptyRow) {
  std::string text;
  append_float_row(nullptr, 0, &text);
  EXPECT_EQ(text, "[]");
}

TEST(Base64, Rfc4648TestVectors) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [in, out] : vectors) EXPECT_EQ(base64_encode(in, std::strlen(in)), out) << in;
}

TEST(Base64, FloatsAreLittleEndianF32) {
  const float row[] = {1.0f, -2.0f};  // 0x3f800000, 0xc0000000
  EXPECT_EQ(base64_floats(row, 2), base64_encode("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8));
  EXPECT_EQ(base64_floats(row, 2), "AACAPwAAAMA=");
}

TEST(ErrorBodies, TeiAndOpenAIShapes) {
  const ApiError e = validation_error("inputs[2]", "inputs[2]: too long");
  const auto tei = nlohmann::json::parse(tei_error_body(e));
  EXPECT_EQ(tei["error"], "inputs[2]: too long");
  EXPECT_EQ(tei["error_type"], "Validation");
  EXPECT_EQ(tei["field"], "inputs[2]");
  const auto oa = nlohmann::json::parse(openai_error_body(e));
  EXPECT_EQ(oa["error"]["message"], "inputs[2]: too long");
  EXPECT_EQ(oa["error"]["type"], "invalid_request_error");
  EXPECT_EQ(oa["error"]["param"], "inputs[2]");
  const auto busy = nlohmann::json::parse(openai_error_body({429, "Overloaded", "", "busy"}));
  EXPECT_EQ(busy["error"]["type"], "rate_limit_error");
  EXPECT_TRUE(busy["error"]["param"].is_null());
  const auto backend = nlohmann::json::parse(openai_error_body({424, "Backend", "", "x"}));
  EXPECT_EQ(backend["error"]["type"], "server_error");
}

TEST(ErrorBodies, InvalidUtf8InAMessageIsReplacedNotThrown) {
  const ApiError e = validation_error("inputs", "bad \xff text");
  nlohmann::json j;
  EXPECT_NO_THROW(j = nlohmann::json::parse(tei_error_body(e)));
  EXPECT_NO_THROW(j = nlohmann::json::parse(openai_error_body(e)));
}

TEST(ApiKey, BearerTokenMustMatchExactly) {
  const ApiKeyCheck off;
  EXPECT_FALSE(off.enabled());
  EXPECT_TRUE(off.allows(""));
  const ApiKeyCheck check("s3cret");
  EXPECT_TRUE(check.enabled());
  EXPECT_TRUE(check.allows("Bearer s3cret"));
  EXPECT_TRUE(check.allows("bearer s3cret"));
  EXPECT_TRUE(check.allows("BEARER  s3cret "));
  EXPECT_FALSE(check.allows(""));
  EXPECT_FALSE(check.allows("s3cret"));
  EXPECT_FALSE(check.allows("Basic s3cret"));
  EXPECT_FALSE(check.allows("Bearer s3cre"));
  EXPECT_FALSE(check.allows("Bearer s3cret2"));
  EXPECT_FALSE(check.allows("Bearer S3cret"));
  EXPECT_FALSE(check.allows("Bearer "));
}

}  // namespace
}  // namespace tessera::server
