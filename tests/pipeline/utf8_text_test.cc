#include "pipeline/utf8_text.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera::pipeline {
namespace {

TEST(Utf8Text, AcceptsValidText) {
  EXPECT_EQ(describe_invalid_utf8(""), "");
  EXPECT_EQ(describe_invalid_utf8("plain ascii"), "");
  EXPECT_EQ(describe_invalid_utf8("h\xC3\xA9llo \xE4\xB8\xAD \xF0\x9F\x98\x80"), "");  // é 中 😀
}

TEST(Utf8Text, NamesTheByteOfTheFirstBadSequence) {
  struct Case {
    std::string text;
    std::string expect;
  };
  const Case cases[] = {
      {"ab\x80z", "at byte 2 (bytes 80 7A)"},                 // stray continuation byte
      {"\xC0\x80", "at byte 0 (bytes C0 80)"},                // overlong NUL
      {"ok \xED\xA0\x80", "at byte 3 (bytes ED A0 80)"},      // UTF-16 surrogate
      {"x\xE2\x82", "at byte 1 (bytes E2 82)"},               // truncated at the end
      {"\xF4\x90\x80\x80", "at byte 0 (bytes F4 90 80 80)"},  // above U+10FFFF
      {"\xC3\xA9\xFF", "at byte 2 (bytes FF)"},
  };
  for (const Case& c : cases) {
    const std::string message = describe_invalid_utf8(c.text);
    EXPECT_NE(message.find("not valid UTF-8 " + c.expect), std::string::npos) << "got: " << message;
  }
}

TEST(Utf8Text, CodePointIndexCountsCharactersNotBytes) {
  // Mix 1-, 2-, 3- and 4-byte characters over more than one checkpoint block.
  std::string text;
  std::vector<int64_t> starts;  // byte offset of each character
  const char* pieces[] = {"a", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80"};
  for (int i = 0; i < 200; ++i) {
    starts.push_back(static_cast<int64_t>(text.size()));
    text += pieces[(i * 7) % 4];
  }
  const CodePointIndex index(text);
  EXPECT_EQ(index.size(), 200);
  for (int64_t c = 0; c < 200; ++c) EXPECT_EQ(index.at(starts[c]), c) << "character " << c;
  EXPECT_EQ(index.at(static_cast<int64_t>(text.size())), 200);
  EXPECT_EQ(CodePointIndex("").at(0), 0);
}

}  // namespace
}  // namespace tessera::pipeline
