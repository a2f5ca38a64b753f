#include <gtest/gtest.h>

#include <cstdlib>

#include "tessera/dispatcher.h"

namespace tessera {
namespace {

TEST(Policy, ParsesEveryClause) {
  Policy p;
  ASSERT_TRUE(parse_policy("prefer:cpu.flash, cpu.gemm; deny:reference", &p).ok());
  EXPECT_EQ(p.prefer, (std::vector<std::string>{"cpu.flash", "cpu.gemm"}));
  EXPECT_EQ(p.deny, (std::vector<std::string>{"reference"}));
  EXPECT_TRUE(p.only.empty());
  ASSERT_TRUE(parse_policy("reference", &p).ok());
  EXPECT_EQ(p.only, (std::vector<std::string>{"reference"}));
  ASSERT_TRUE(parse_policy("auto", &p).ok());
  EXPECT_EQ(p.to_string(), "auto");
  ASSERT_TRUE(parse_policy("only:cpu.flash; fail:cpu.flash,xla", &p).ok());
  EXPECT_EQ(p.fail, (std::vector<std::string>{"cpu.flash", "xla"}));
  EXPECT_EQ(p.to_string(), "only:cpu.flash;fail:cpu.flash,xla");
}

// Variants are named "<backend>:<what>": a clause splits at its first ':'.
TEST(Policy, NamesMayHoldColonsAfterTheClause) {
  Policy p;
  ASSERT_TRUE(parse_policy("only:cpu.flash:bf16dot", &p).ok());
  EXPECT_EQ(p.only, (std::vector<std::string>{"cpu.flash:bf16dot"}));
  ASSERT_TRUE(parse_policy("prefer:cpu.flash:amx, cpu.flash:f32; deny:cpu.flash", &p).ok());
  EXPECT_EQ(p.prefer, (std::vector<std::string>{"cpu.flash:amx", "cpu.flash:f32"}));
  EXPECT_EQ(p.deny, (std::vector<std::string>{"cpu.flash"}));
  Policy again;
  ASSERT_TRUE(parse_policy(p.to_string(), &again).ok());
  EXPECT_EQ(again.to_string(), p.to_string());
  // A bare list has no clause to split off: the text before ':' would be
  // read as one, so it is refused with the spelling that works.
  const Status s = parse_policy("cpu.flash:f32", &p);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("only:cpu.flash:f32"), std::string::npos) << s.message();
}

TEST(Policy, RejectsUnknownClause) {
  Policy p;
  Status s = parse_policy("favour:x", &p);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("favour"), std::string::npos);
  EXPECT_FALSE(parse_policy("only:a,,b", &p).ok());
}

TEST(Policy, RejectsHostileNamesWithBoundedMessages) {
  Policy p;
  const std::string huge(1 << 20, 'a');
  for (const std::string& text : {huge, "prefer:" + huge, std::string("deny:cpu.flash,\x1b[2J"),
                                  std::string("only:a b"), huge + ":x", "allow:" + huge}) {
    const Status s = parse_policy(text, &p);
    ASSERT_EQ(s.code(), StatusCode::kInvalidArgument) << text.substr(0, 60);
    EXPECT_LT(s.message().size(), 400u) << s.message().substr(0, 400);
  }
  EXPECT_NE(parse_policy("deny:\x1b[2J", &p).message().find("\\x1b"), std::string::npos);
  ASSERT_TRUE(parse_policy("prefer:" + std::string(64, 'n'), &p).ok());
  EXPECT_FALSE(parse_policy("prefer:" + std::string(65, 'n'), &p).ok());
}

}  // namespace
}  // namespace tessera
