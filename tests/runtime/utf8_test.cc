// The one UTF-8 validator (runtime/utf8.h): what it accepts, and where and
// how it reports the first bad sequence.
#include "runtime/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera {
namespace {

TEST(Utf8, AcceptsValidText) {
  EXPECT_EQ(describe_invalid_utf8(""), "");
  EXPECT_EQ(describe_invalid_utf8("plain ascii"), "");
  EXPECT_EQ(describe_invalid_utf8("h\xC3\xA9llo \xE4\xB8\xAD \xF0\x9F\x98\x80"), "");  // é 中 😀
}

TEST(Utf8, NamesTheByteOfTheFirstBadSequence) {
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

TEST(Utf8, FindsTheFirstBadSequenceAtEveryLengthAndBoundary) {
  // The edges of Table 3-7: the last valid and first invalid lead and second bytes.
  EXPECT_EQ(find_invalid_utf8("\x7F\xC2\x80\xDF\xBF"), 5u);
  EXPECT_EQ(find_invalid_utf8("\xC1\xBF"), 0u);                          // overlong 2-byte
  EXPECT_EQ(find_invalid_utf8("\xE0\xA0\x80\xEF\xBF\xBF"), 6u);          // U+0800, U+FFFF
  EXPECT_EQ(find_invalid_utf8("\xE0\x9F\xBF"), 0u);                      // overlong 3-byte
  EXPECT_EQ(find_invalid_utf8("\xED\x9F\xBF"), 3u);                      // U+D7FF
  EXPECT_EQ(find_invalid_utf8("\xF0\x90\x80\x80\xF4\x8F\xBF\xBF"), 8u);  // U+10000, U+10FFFF
  EXPECT_EQ(find_invalid_utf8("\xF0\x8F\xBF\xBF"), 0u);                  // overlong 4-byte
  EXPECT_EQ(find_invalid_utf8("\xF5\x80\x80\x80"), 0u);                  // no such lead byte
  EXPECT_EQ(find_invalid_utf8("ab\xE4\xB8"), 2u);                        // truncated
  EXPECT_EQ(find_invalid_utf8("\xE4\xB8\x41"), 0u);                      // a bad third byte
}

}  // namespace
}  // namespace tessera
