// Shape strings of `backends --explain`, `bench attention` and `tune`: values
// are range-checked, products checked for overflow, and sizes bounded before
// anything is allocated, with errors naming the key, the number and the limit.
// They read into verify's case type (src/verify/case_text.h).
#include <gtest/gtest.h>

#include <string>

#include "runtime/size_limits.h"
#include "verify/case_text.h"
#include "verify/plain_case.h"

namespace tessera::verify {
namespace {

Status parse(const std::string& text) {
  AttentionCase spec;
  return parse_case(text, &spec);
}

TEST(Shape, ParsesEveryKey) {
  AttentionCase s;
  const std::string text =
      "B=2,Sq=3,Sk=5,Hq=8,Hkv=2,D=16,Dv=8,dtype=bf16,mask=window,"
      "window=4:0,layout=bhsd,lse=1,bias=1,varlen=0,softcap=30.5";
  ASSERT_TRUE(parse_case(text, &s).ok());
  EXPECT_EQ(s.batch, 2);
  EXPECT_EQ(s.sk, 5);
  EXPECT_EQ(s.dv, 8);
  EXPECT_EQ(s.mask.window_left, 4);
  EXPECT_TRUE(s.layout == Layout::kBHSD && s.lse && s.bias == BiasKind::kShared && !s.varlen());
  EXPECT_FLOAT_EQ(s.softcap, 30.5f);
  EXPECT_EQ(s.text, text);
  AttentionCase v;
  ASSERT_TRUE(parse_case("B=3,Sq=4,Sk=6,varlen=1", &v).ok());
  EXPECT_EQ(v.seqlens_q, (std::vector<int32_t>{4, 4, 4}));
  EXPECT_EQ(v.seqlens_k, (std::vector<int32_t>{6, 6, 6}));
}

TEST(Shape, RejectsValuesThatAreNotSmallIntegers) {
  for (const char* text : {"B=-1", "B= 2", "B=+2", "B=2x", "B=", "S=1e3", "D=0x40",
                           "S=9223372036854775807", "S=99999999999999999999999", "H=2147483648"}) {
    const Status s = parse(text);
    ASSERT_EQ(s.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(s.message().find("is not an integer in [0, 2147483647]"), std::string::npos)
        << s.message();
  }
  EXPECT_TRUE(parse("Sq=2147483647,Sk=1,B=1,H=1,D=1").ok());
}

TEST(Shape, RejectsSoftcapsThatAreNotFiniteNonNegative) {
  for (const char* text :
       {"softcap=1.5abc", "softcap=nan", "softcap=inf", "softcap=1e40", "softcap=-1", "softcap="}) {
    EXPECT_NE(parse(text).message().find("not a finite number >= 0"), std::string::npos) << text;
  }
}

TEST(Shape, BoundsProductsBeforeAnythingIsBuilt) {
  // Each value is in range; their products are not.
  Status s = parse("B=2147483647,S=2147483647,H=2147483647,D=2147483647");
  ASSERT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("q (B*Sq*Hq*D) has more than 2^63 elements"), std::string::npos)
      << s.message();
  s = parse("B=65536,S=65536,H=1,D=65537");
  EXPECT_NE(s.message().find("q (B*Sq*Hq*D) has 281479271677952 elements, more than the limit "
                             "of 281474976710656"),
            std::string::npos)
      << s.message();
  s = parse("B=1,S=20000000,H=1,D=1,bias=1");
  EXPECT_NE(s.message().find("bias (Hq*Sq*Sk) has 400000000000000 elements"), std::string::npos)
      << s.message();
  s = parse("B=1024,S=2097152,H=64,D=1");
  EXPECT_NE(s.message().find("scores (B*Hq*Sq*Sk)"), std::string::npos) << s.message();
}

TEST(Shape, BoundsVarlenBatches) {
  Status s = parse("B=2000000000,S=0,varlen=1");
  ASSERT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("varlen B = 2000000000 sequences exceeds the limit of 65536"),
            std::string::npos)
      << s.message();
  s = parse("B=65536,S=65536,H=1,D=1,varlen=1");
  EXPECT_NE(s.message().find("B * max(Sq, Sk) = 4294967296 rows"), std::string::npos)
      << s.message();
  AttentionCase spec;
  ASSERT_TRUE(parse_case("B=65536,S=1,H=1,D=1,varlen=1", &spec).ok());
  const PlainCase shapes = PlainCase::placeholder(spec);
  const AttentionArgs& a = shapes.args();
  ASSERT_TRUE(a.varlen.has_value());
  EXPECT_EQ(a.varlen->cu_seqlens_q[65536], 65536);
  EXPECT_FALSE(parse_case("B=65537,S=1,H=1,D=1,varlen=1", &spec).ok());
}

TEST(Shape, HostileTextIsShownCutShort) {
  const std::string junk(1 << 20, 'x');
  for (const std::string& text : {junk, "B=" + junk, "dtype=" + junk, junk + "=1"}) {
    const Status s = parse(text);
    ASSERT_FALSE(s.ok());
    EXPECT_LT(s.message().size(), 400u) << s.message().substr(0, 400);
  }
  EXPECT_NE(parse("mask=\x1b[2J").message().find("\\x1b"), std::string::npos);
}

TEST(Shape, ProblemRefusesTensorsBeyondTheMachinesMemory) {
  AttentionCase spec;
  // 2^46 f32 elements per tensor: 256 TiB each, within the parse limits.
  ASSERT_TRUE(parse_case("B=1,S=1048576,H=1024,D=65536", &spec).ok());
  TrackingAllocator alloc;
  PlainCase p;
  const Status s = PlainCase::create(spec, alloc, &p);
  ASSERT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("more than this machine's memory of " +
                             std::to_string(host_memory_bytes()) + " bytes"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(alloc.live_bytes(), 0u);
}

TEST(SizeLimits, CheckedProductDetectsOverflow) {
  EXPECT_EQ(checked_product({2, 3, 7}), 42);
  EXPECT_EQ(checked_product({}), 1);
  EXPECT_EQ(checked_product({INT64_MAX, 2}), -1);
  EXPECT_EQ(checked_product({4, -1}), -1);
  EXPECT_EQ(checked_product({int64_t{1} << 31, int64_t{1} << 31}), int64_t{1} << 62);
  EXPECT_EQ(checked_product({int64_t{1} << 31, int64_t{1} << 31, 2}), -1);
}

}  // namespace
}  // namespace tessera::verify
