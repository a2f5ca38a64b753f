// The .npy reader and writer of `tessera attention run` on valid files and on
// hostile headers: every bad input is an InvalidArgument naming the file, the
// field and the value (cut short), never a crash or a large allocation.
#include "apps/tessera/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>

#include "apps/tessera/npy_header.h"

namespace tessera::cli {
namespace {

// A version-1 .npy file: magic, header length, header, data.
std::string npy_file(const std::string& header, const std::string& data = "", int version = 1) {
  std::string s = std::string("\x93NUMPY", 6) + static_cast<char>(version) + '\0';
  const size_t n = header.size();
  s += static_cast<char>(n & 0xff);
  s += static_cast<char>((n >> 8) & 0xff);
  if (version > 1) {
    s += static_cast<char>((n >> 16) & 0xff);
    s += static_cast<char>((n >> 24) & 0xff);
  }
  return s + header + data;
}

Status read(const std::string& bytes, NpyArray* out) {
  std::istringstream in(bytes);
  return read_npy(in, "t.npy", out);
}

Status parse(const std::string& header) {
  NpyHeader h;
  return parse_npy_header(header, "t.npy", &h);
}

TEST(NpyHeader, ParsesWhatNumpyWrites) {
  NpyHeader h;
  ASSERT_TRUE(
      parse_npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }      \n",
                       "t.npy", &h)
          .ok());
  EXPECT_EQ(h.descr, "<f4");
  EXPECT_FALSE(h.fortran_order);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_TRUE(
      parse_npy_header("{\"shape\":(5,),\"fortran_order\":True,\"descr\":\"<f2\"}", "t", &h).ok());
  EXPECT_EQ(h.shape, (std::vector<int64_t>{5}));
  EXPECT_TRUE(h.fortran_order);
  ASSERT_TRUE(
      parse_npy_header("{'descr': '<u2', 'fortran_order': False, 'shape': ()}", "t", &h).ok());
  EXPECT_TRUE(h.shape.empty());
  // Python 2 NumPy wrote long integers.
  ASSERT_TRUE(
      parse_npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 4L), }", "t", &h)
          .ok());
  EXPECT_EQ(h.shape, (std::vector<int64_t>{3, 4}));
}

TEST(NpyHeader, RejectsBadDimsNamingTheValue) {
  const std::string head = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (const char* dims : {"abc,", "-3,", "2, 1e3", "99999999999999999999,", "+4,", "0x10,"}) {
    const Status s = parse(head + dims + "), }");
    ASSERT_EQ(s.code(), StatusCode::kInvalidArgument) << dims;
    EXPECT_NE(s.message().find("t.npy"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("shape["), std::string::npos) << s.message();
  }
  EXPECT_NE(parse(head + "-3,), }").message().find("'-3'"), std::string::npos);
  // INT64_MAX is a dim; a product beyond int64 is not.
  EXPECT_TRUE(parse(head + "9223372036854775807,), }").ok());
  EXPECT_NE(parse(head + "4294967296, 4294967296), }").message().find("more than 2^63"),
            std::string::npos);
  // Zero elements however large the other dims, as long as they multiply in int64.
  EXPECT_TRUE(parse(head + "0, 4611686018427387904), }").ok());
}

TEST(NpyHeader, RejectsMalformedDicts) {
  const std::string ok_descr = "'descr': '<f4', ";
  const std::string ok_order = "'fortran_order': False, ";
  const std::string ok_shape = "'shape': (2,), ";
  for (const std::string& header : {
           std::string(""),
           std::string("{"),
           "{" + ok_descr + ok_order + "}",                         // no shape
           "{" + ok_descr + ok_shape + "}",                         // no order
           "{" + ok_descr + ok_order + ok_shape + ok_shape + "}",   // twice
           "{" + ok_descr + ok_order + ok_shape + "'extra': 1}",    // unknown
           "{" + ok_order + ok_shape + "'descr': [('a', '<f4')]}",  // structured
           "{" + ok_descr + "'fortran_order': Maybe, " + ok_shape + "}",
           "{" + ok_descr + ok_order + "'shape': (5)}",  // not a tuple
           "{" + ok_descr + ok_order + "'shape': (1,,)}",
           "{" + ok_descr + ok_order + "'shape': [2]}",
           "{" + ok_descr + ok_order + "'shape': (2,)} trailing",
           "{'descr': '<f\\x34', " + ok_order + ok_shape + "}",  // escape
           std::string("{'descr: '<f4'}"),
       }) {
    const Status s = parse(header);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << header;
    EXPECT_NE(s.message().find("t.npy: .npy header"), std::string::npos) << s.message();
  }
}

TEST(NpyHeader, HostileValuesAreShownCutShort) {
  const std::string huge(100000, '7');
  const Status s = parse("{'descr': '<f4', 'fortran_order': False, 'shape': (" + huge + "x,)}");
  ASSERT_FALSE(s.ok());
  EXPECT_LT(s.message().size(), 300u) << s.message().substr(0, 300);
  EXPECT_NE(s.message().find("(100001 bytes)"), std::string::npos) << s.message();
  const Status key = parse("{'\x1b[31m': 1}");
  EXPECT_NE(key.message().find("\\x1b"), std::string::npos) << key.message();
}

TEST(NpyHeader, LongHeadersParseInLinearTimeWithoutRecursion) {
  // std::regex recursed per character here and overflowed the stack.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  header += std::string(1 << 20, ' ') + "2,), }";
  NpyHeader h;
  ASSERT_TRUE(parse_npy_header(header, "t", &h).ok());
  EXPECT_EQ(h.shape, (std::vector<int64_t>{2}));
  EXPECT_FALSE(parse("{'descr': '" + std::string(1 << 20, 'f') + "', }").ok());
  std::string deep =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(1 << 16, '(') + "}";
  EXPECT_FALSE(parse(deep).ok());
  std::string many = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 40; ++i) many += "1, ";
  EXPECT_NE(parse(many + ")}").message().find("more than 32 dims"), std::string::npos);
}

TEST(Npy, ChecksTheDataLengthBeforeAllocating) {
  NpyArray a;
  // 2^62 elements of '<f4' would be 16 EiB: refused from the header alone.
  Status s = read(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': "
                           "(4611686018427387904,), }\n"),
                  &a);
  ASSERT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("more than 2^64 bytes"), std::string::npos) << s.message();
  s = read(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000,), }\n",
                    std::string(8, '\0')),
           &a);
  EXPECT_NE(s.message().find("needs 4000000000 bytes of data but the file has 8 (truncated?)"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(a.bytes.empty());
  s = read(
      npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", std::string(8, '\0')),
      &a);
  EXPECT_NE(s.message().find("needs 4 bytes of data but the file has 8"), std::string::npos);
  // A header length beyond the file or the limit.
  s = read(npy_file(std::string(10, ' '), "", 2).substr(0, 20), &a);
  EXPECT_NE(s.message().find("bytes left in the file"), std::string::npos) << s.message();
  std::string v2 = npy_file("{}", "", 2);
  v2[8] = v2[9] = v2[10] = v2[11] = '\x7f';
  EXPECT_NE(read(v2, &a).message().find("exceeds"), std::string::npos);
}

TEST(Npy, RejectsBadMagicVersionAndDtype) {
  NpyArray a;
  EXPECT_NE(read("PK\x03\x04 not npy", &a).message().find("bad magic"), std::string::npos);
  std::string v9 = npy_file("{}");
  v9[6] = 9;
  EXPECT_NE(read(v9, &a).message().find("version 9"), std::string::npos);
  const Status s = read(
      npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }\n", std::string(8, '\0')),
      &a);
  EXPECT_NE(s.message().find("'descr' = '<i8' is not supported"), std::string::npos) << s.message();
  EXPECT_NE(read(npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }\n",
                          std::string(4, '\0')),
                 &a)
                .message()
                .find("fortran_order"),
            std::string::npos);
}

TEST(Npy, WritesWhatItReadsBack) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("npy_test_" + std::to_string(::getpid()) + ".npy"))
          .string();
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3}, {5}, {}, {0, 7}, {1, 2, 1, 2}}) {
    NpyArray a{"<f4", shape, {}};
    a.bytes.resize(static_cast<size_t>(a.numel()) * 4);
    for (size_t i = 0; i < a.bytes.size(); ++i) a.bytes[i] = static_cast<uint8_t>(i * 7);
    ASSERT_TRUE(write_npy(path, a).ok());
    NpyArray b;
    ASSERT_TRUE(read_npy(path, &b).ok());
    EXPECT_EQ(b.descr, a.descr);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.bytes, a.bytes);
  }
  // The writer refuses arrays whose bytes do not match the shape, or an
  // unknown dtype, instead of writing a file no reader accepts.
  EXPECT_FALSE(write_npy(path, NpyArray{"<f4", {3}, std::vector<uint8_t>(8)}).ok());
  EXPECT_FALSE(write_npy(path, NpyArray{"<i8", {1}, std::vector<uint8_t>(8)}).ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tessera::cli
