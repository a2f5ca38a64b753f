#include "runtime/bounded_read.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace tessera {
namespace {

struct Lines {
  std::vector<std::string> lines;  // "<too long>" for a dropped line
  uint64_t consumed = 0;
};

Lines read_lines(const std::string& text, uint64_t max_bytes) {
  std::istringstream in(text);
  Lines r;
  std::string line;
  uint64_t consumed = 0;
  for (LineRead read;
       (read = read_line_bounded(in, max_bytes, &line, &consumed)) != LineRead::kEnd;) {
    r.lines.push_back(read == LineRead::kTooLong ? "<too long>" : line);
    r.consumed += consumed;
  }
  return r;
}

// Lengths around the reader's 16 KiB piece, where a line continues across
// getline calls.
TEST(BoundedRead, LinesOfAnyLengthComeBackWhole) {
  for (size_t length : {0, 1, 16382, 16383, 16384, 16385, 40000}) {
    const std::string a(length, 'a');
    const std::string text = a + "\n" + "next\n\nlast";
    const Lines r = read_lines(text, 1 << 20);
    ASSERT_EQ(r.lines.size(), 4u) << length;
    EXPECT_EQ(r.lines[0], a) << length;
    EXPECT_EQ(r.lines[1], "next");
    EXPECT_EQ(r.lines[2], "");
    EXPECT_EQ(r.lines[3], "last");
    EXPECT_EQ(r.consumed, text.size());
  }
}

TEST(BoundedRead, ALineOverTheCapIsDroppedAndTheNextOneRead) {
  for (size_t length : {11, 16383, 16384, 50000}) {
    const std::string text = "0123456789\n" + std::string(length, 'x') + "\nafter";
    const Lines r = read_lines(text, 10);
    ASSERT_EQ(r.lines.size(), 3u) << length;
    EXPECT_EQ(r.lines[0], "0123456789");  // exactly the cap
    EXPECT_EQ(r.lines[1], "<too long>");
    EXPECT_EQ(r.lines[2], "after");
    EXPECT_EQ(r.consumed, text.size());
  }
}

TEST(BoundedRead, ReadAllKeepsAtMostTheCap) {
  for (size_t length : {0, 9, 10, 11, 3 << 20}) {
    std::istringstream in(std::string(length, 'z'));
    std::string out;
    bool truncated = false;
    read_all_bounded(in, 10, &out, &truncated);
    EXPECT_EQ(truncated, length > 10) << length;
    EXPECT_EQ(out, std::string(std::min<size_t>(length, 10), 'z'));
  }
}

}  // namespace
}  // namespace tessera
