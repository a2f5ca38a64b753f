// The one .npy writer (runtime/npy_writer.h): headers laid out as NumPy lays
// them out, fixed-size headers for rewriting in place, whole files.
#include "runtime/npy_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tessera {
namespace {

// The dict of a header: after magic (6), version (2) and length (2).
std::string dict_of(const std::string& header) { return header.substr(10); }

TEST(NpyWriter, HeaderIsNumPysVersion1Layout) {
  std::string h;
  ASSERT_TRUE(npy::header("<f4", {2, 3}, &h).ok());
  EXPECT_EQ(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(h.size() % 64, 0u) << "the data starts on a 64-byte boundary";
  const size_t length = static_cast<unsigned char>(h[8]) | static_cast<unsigned char>(h[9]) << 8;
  EXPECT_EQ(length, h.size() - 10);
  EXPECT_EQ(dict_of(h).rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u);
  EXPECT_EQ(h.back(), '\n');
  // As NumPy's _wrap_header, 1 to 64 spaces: never none, even when the dict
  // and newline would end on the boundary by themselves (one of these
  // lengths does).
  for (size_t n = 1; n <= 64; ++n) {
    ASSERT_TRUE(npy::header(std::string(n, 'x'), {1}, &h).ok());
    EXPECT_EQ(h.size() % 64, 0u);
    EXPECT_EQ(h[h.size() - 2], ' ') << h;
    EXPECT_LE(h.size() - (dict_of(h).find(", }") + 3 + 10), 65u) << "at most 64 spaces";
  }
}

TEST(NpyWriter, ShapesAreWrittenAsPythonTuples) {
  EXPECT_EQ(npy::shape_text({}), "()");
  EXPECT_EQ(npy::shape_text({5}), "(5,)");
  EXPECT_EQ(npy::shape_text({2, 0, 7}), "(2, 0, 7)");
}

TEST(NpyWriter, FixedSizeHeadersKeepTheirSizeOrFail) {
  std::string small, large;
  ASSERT_TRUE(npy::header("|i1", {0, 384}, &small, 128).ok());
  ASSERT_TRUE(npy::header("|i1", {INT64_MAX, INT64_MAX}, &large, 128).ok());
  EXPECT_EQ(small.size(), 128u);
  EXPECT_EQ(large.size(), 128u);
  std::string too_small;
  const Status s = npy::header("<f4", {1, 2, 3}, &too_small, 64);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("does not fit 64 bytes"), std::string::npos) << s.message();
}

TEST(NpyWriter, DtypesAreNamedAsTheCliReadsThem) {
  EXPECT_EQ(npy::descr_of(DType::kF32), "<f4");
  EXPECT_EQ(npy::descr_of(DType::kF16), "<f2");
  EXPECT_EQ(npy::descr_of(DType::kBF16), "<u2");  // bf16 as its bits
}

TEST(NpyWriter, WritesHeaderThenData) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("npy_writer_test_" + std::to_string(::getpid()) + ".npy"))
                               .string();
  const std::string data("\x01\x02\x03\x04\x05\x06", 6);
  ASSERT_TRUE(npy::write_file(path, "<u2", {3}, data).ok());
  std::ifstream f(path, std::ios::binary);
  std::stringstream bytes;
  bytes << f.rdbuf();
  std::string head;
  ASSERT_TRUE(npy::header("<u2", {3}, &head).ok());
  EXPECT_EQ(bytes.str(), head + data);
  std::filesystem::remove(path);
  const Status s = npy::write_file("/nonexistent-dir/x.npy", "<u2", {3}, data);
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.to_string();
}

}  // namespace
}  // namespace tessera
