#include "pipeline/utf8_text.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera::pipeline {
namespace {

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
