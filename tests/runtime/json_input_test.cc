#include "runtime/json_input.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera::json_input {
namespace {

using nlohmann::json;

std::string nested(int levels) { return std::string(levels, '[') + std::string(levels, ']'); }

TEST(JsonInput, ParsesOrdinaryJson) {
  json j;
  ASSERT_TRUE(parse(R"({"a": [1, 2.5, "x"], "b": {"c": null}})", "doc", &j).ok());
  EXPECT_EQ(j["a"][1], 2.5);
}

TEST(JsonInput, EveryFailureIsAStatusNamingTheSource) {
  const struct {
    std::string text;
    const char* needle;
  } cases[] = {
      {"{\"a\": ", "not valid JSON"},
      {"[1e400]", "out of range"},
      {"{\"a\": -1e999}", "out of range"},
      {"\"\xff\"", "not valid JSON"},  // invalid UTF-8
      {nested(129), "nests deeper than 128"},
      {nested(300000), "nests deeper than 128"},
      {"{\"k\": " + nested(200) + "}", "nests deeper than"},
  };
  for (const auto& c : cases) {
    json j;
    const Status s = parse(c.text, "in.json", &j);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.text.substr(0, 20);
    EXPECT_NE(s.message().find("in.json: "), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(c.needle), std::string::npos) << s.message();
  }
}

TEST(JsonInput, DepthLimitIsInclusiveAndIgnoresBracketsInStrings) {
  json j;
  EXPECT_TRUE(parse(nested(128), "x", &j).ok());
  EXPECT_TRUE(parse("[\"" + std::string(1000, '[') + "\"]", "x", &j).ok());
  EXPECT_TRUE(parse(R"(["\"[[[[", {"a": "]]]\\"}])", "x", &j).ok());
  EXPECT_EQ(nesting_depth(R"(["\"[", {"a": [1]}])", 10), 3);
  EXPECT_EQ(nesting_depth(nested(50), 10), 11);  // stops once past the limit
}

TEST(JsonInput, ParseFileNamesAMissingFile) {
  json j;
  const Status s = parse_file("/nonexistent/dir/config.json", &j);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("/nonexistent/dir/config.json"), std::string::npos);
}

TEST(JsonInput, DescribeIsBoundedWhateverTheValue) {
  // A value as deep as the parser allows and far wider than any message.
  json deep = json::array();
  for (int i = 0; i < 128; ++i) deep = json::array({deep, i});
  json wide = json::array();
  for (int i = 0; i < 100000; ++i) wide.push_back(std::string(100, 'x'));
  const json big_string = std::string(1 << 20, 'y');
  const json big_key = {{std::string(1 << 20, 'k'), 1}};
  EXPECT_LE(describe(deep).size(), kDescribeChars + 16) << describe(deep);
  for (const json* v : std::initializer_list<const json*>{&wide, &big_string, &big_key}) {
    const std::string d = describe(*v);
    EXPECT_LE(d.size(), kDescribeChars + 16) << d;
    EXPECT_EQ(d.substr(d.size() - 3), "...") << d;
  }
  EXPECT_EQ(describe(json(3)), "number 3");
  EXPECT_EQ(describe(json("yes")), "string \"yes\"");
  EXPECT_EQ(render(json::array({1, json::array({2})})), "[1,[2]]");
  EXPECT_EQ(render(json::parse(R"({"a":{"b":{"c":{"d":{"e":1}}}}})")),
            R"({"a":{"b":{"c":{"d":{...}}}}})");
}

TEST(JsonInput, DescribeNeverSplitsOrEmitsNonAscii) {
  const json v = std::string(100, 'a') + "\xc3\xa9";  // valid UTF-8, cut mid-way when short
  for (size_t max = 1; max < 110; ++max) {
    for (char c : render(v, max)) EXPECT_LT(static_cast<unsigned char>(c), 0x80);
  }
}

TEST(JsonInput, ClipBacksOffToACharacterBoundary) {
  EXPECT_EQ(clip("short", 10), "short");
  EXPECT_EQ(clip("abcdef", 3), "abc...");
  EXPECT_EQ(clip("ab\xc3\xa9z", 3), "ab...");  // never "ab\xc3"
}

}  // namespace
}  // namespace tessera::json_input
