#include "model/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <string>

#include "model_test_util.h"

namespace tessera::model {
namespace {

using testing::FakeTensor;
using testing::TempDir;

// Opens `bytes` written to a file and returns the status (and the file on success).
Status open_bytes(const TempDir& dir, const std::string& bytes,
                  std::unique_ptr<SafetensorsFile>* file = nullptr) {
  const std::string path = dir.file("model.safetensors");
  testing::write_file(path, bytes);
  std::unique_ptr<SafetensorsFile> f;
  Status st = SafetensorsFile::open(path, &f);
  if (file != nullptr) *file = std::move(f);
  return st;
}

void expect_error(const Status& st, StatusCode code, std::initializer_list<std::string> parts) {
  EXPECT_EQ(st.code(), code) << st.to_string();
  for (const std::string& p : parts) {
    EXPECT_NE(st.message().find(p), std::string::npos)
        << "message lacks '" << p << "': " << st.message();
  }
}

TEST(Safetensors, ReadsF32F16Bf16AndOtherDtypes) {
  TempDir dir;
  std::vector<FakeTensor> tensors = {
      {"a", {2, 3}, {1, -2, 3.5f, 0, 1e-3f, -7}, "F32"},
      {"b", {3}, {0.5f, -1.25f, 65504.0f}, "F16"},
      {"c", {2, 1}, {3.0f, -0.15625f}, "BF16"},
  };
  std::string bytes = testing::make_safetensors(tensors);
  std::unique_ptr<SafetensorsFile> f;
  ASSERT_TRUE(open_bytes(dir, bytes, &f).ok());
  EXPECT_EQ(f->tensors().size(), 3u);
  EXPECT_EQ(f->metadata().at("format"), "pt");
  EXPECT_EQ(f->mapped_bytes(), bytes.size());
  for (const FakeTensor& t : tensors) {
    const SafeTensor* st = f->find(t.name);
    ASSERT_NE(st, nullptr) << t.name;
    EXPECT_EQ(st->shape, t.shape);
    EXPECT_EQ(st->dtype, t.dtype);
    std::vector<float> got(st->numel());
    ASSERT_TRUE(f->read_f32(*st, got.data()).ok());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], t.values[i]) << t.name << i;
  }
  EXPECT_EQ(f->find("missing"), nullptr);
}

TEST(Safetensors, AReleasedTensorReadsTheSameAgain) {
  // Several pages of one tensor, so release() has whole pages to drop.
  TempDir dir;
  std::vector<float> values(5 * 4096);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f - 7.0f;
  const std::vector<FakeTensor> tensors = {{"big", {5, 4096}, values, "F32"},
                                           {"small", {2}, {1.0f, 2.0f}, "F32"}};
  std::unique_ptr<SafetensorsFile> f;
  ASSERT_TRUE(open_bytes(dir, testing::make_safetensors(tensors), &f).ok());
  for (const FakeTensor& t : tensors) {
    const SafeTensor* st = f->find(t.name);
    ASSERT_NE(st, nullptr);
    std::vector<float> first(st->numel()), again(st->numel());
    ASSERT_TRUE(f->read_f32(*st, first.data()).ok());
    f->release(*st);
    ASSERT_TRUE(f->read_f32(*st, again.data()).ok());
    EXPECT_EQ(first, again) << t.name;
    EXPECT_EQ(first, t.values) << t.name;
  }
}

TEST(Safetensors, NonFloatTensorsLoadButDoNotConvert) {
  TempDir dir;
  const std::string header = R"({"ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},)"
                             R"("empty":{"dtype":"F32","shape":[0,4],"data_offsets":[16,16]}})";
  std::unique_ptr<SafetensorsFile> f;
  ASSERT_TRUE(open_bytes(dir, testing::safetensors_bytes(header, std::string(16, '\1')), &f).ok());
  const SafeTensor* ids = f->find("ids");
  ASSERT_NE(ids, nullptr);
  EXPECT_FALSE(ids->float_dtype.has_value());
  float dst[2];
  expect_error(f->read_f32(*ids, dst), StatusCode::kUnsupported, {"'ids'", "I64"});
  EXPECT_EQ(f->find("empty")->numel(), 0);
  // An empty tensor converts into no buffer at all (memcpy with null was UB).
  EXPECT_TRUE(f->read_f32(*f->find("empty"), nullptr).ok());
}

TEST(Safetensors, MissingFile) {
  std::unique_ptr<SafetensorsFile> f;
  expect_error(SafetensorsFile::open("/nonexistent/dir/model.safetensors", &f),
               StatusCode::kNotFound, {"/nonexistent/dir/model.safetensors"});
}

TEST(Safetensors, ShorterThanTheHeaderLength) {
  TempDir dir;
  expect_error(open_bytes(dir, "abc"), StatusCode::kInvalidArgument,
               {"model.safetensors", "3 bytes"});
  expect_error(open_bytes(dir, ""), StatusCode::kInvalidArgument, {"0 bytes"});
}

TEST(Safetensors, TruncatedFile) {
  TempDir dir;
  std::string bytes = testing::make_safetensors({{"a", {4}, {1, 2, 3, 4}}});
  // Cut inside the header: the declared length runs past the end.
  expect_error(open_bytes(dir, bytes.substr(0, 20)), StatusCode::kInvalidArgument,
               {"header length", "truncated"});
  // Cut inside the data: the tensor's offsets run past the end.
  expect_error(open_bytes(dir, bytes.substr(0, bytes.size() - 4)), StatusCode::kInvalidArgument,
               {"tensor 'a'", "outside the data section"});
}

TEST(Safetensors, HugeHeaderLength) {
  TempDir dir;
  std::string bytes = testing::safetensors_bytes("{}", "");
  bytes[7] = '\x7f';  // 2^62-ish
  expect_error(open_bytes(dir, bytes), StatusCode::kInvalidArgument, {"header length"});
}

TEST(Safetensors, HeaderLengthOverTheCapEvenWhenTheFileIsThatLarge) {
  TempDir dir;
  const std::string path = dir.file("big.safetensors");
  const uint64_t len = SafetensorsFile::kMaxHeaderBytes + 1;
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((len >> (8 * i)) & 0xff);
  testing::write_file(path, prefix);
  ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(8 + len + 16)), 0);  // sparse
  std::unique_ptr<SafetensorsFile> f;
  expect_error(SafetensorsFile::open(path, &f), StatusCode::kInvalidArgument,
               {"header length", "limit"});
}

TEST(Safetensors, HeaderNotJsonOrNotAnObject) {
  TempDir dir;
  expect_error(open_bytes(dir, testing::safetensors_bytes("{\"a\": ", "")),
               StatusCode::kInvalidArgument, {"not valid JSON"});
  expect_error(open_bytes(dir, testing::safetensors_bytes("[1, 2]", "")),
               StatusCode::kInvalidArgument, {"JSON object"});
}

TEST(Safetensors, UnknownDtype) {
  TempDir dir;
  const std::string header = R"({"w":{"dtype":"F31","shape":[1],"data_offsets":[0,4]}})";
  expect_error(open_bytes(dir, testing::safetensors_bytes(header, std::string(4, '\0'))),
               StatusCode::kInvalidArgument, {"tensor 'w'", "unknown dtype 'F31'", "BF16"});
}

TEST(Safetensors, WrongByteLength) {
  TempDir dir;
  const std::string header = R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})";
  expect_error(open_bytes(dir, testing::safetensors_bytes(header, std::string(24, '\0'))),
               StatusCode::kInvalidArgument, {"tensor 'w'", "needs 24 bytes", "span 20"});
}

TEST(Safetensors, ShapeWhoseByteCountOverflows) {
  TempDir dir;
  const std::string header =
      R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})";
  expect_error(open_bytes(dir, testing::safetensors_bytes(header, "")),
               StatusCode::kInvalidArgument, {"tensor 'w'", "2^64"});
}

// Zero bytes, yet numel() would multiply 2^62 * 3 in int64 (found by fuzzing).
TEST(Safetensors, ShapeWhoseElementCountOverflowsInt64) {
  TempDir dir;
  const std::string header =
      R"({"w":{"dtype":"U8","shape":[4611686018427387904,3,0],"data_offsets":[0,0]}})";
  expect_error(open_bytes(dir, testing::safetensors_bytes(header, "")),
               StatusCode::kInvalidArgument, {"tensor 'w'", "more than 2^63 elements"});
}

TEST(Safetensors, OverlappingOffsets) {
  TempDir dir;
  const std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  expect_error(open_bytes(dir, testing::safetensors_bytes(header, std::string(12, '\0'))),
               StatusCode::kInvalidArgument, {"'a'", "'b'", "overlap"});
}

TEST(Safetensors, MalformedEntries) {
  TempDir dir;
  const std::string data(8, '\0');
  struct Case {
    std::string header, expect;
  } cases[] = {
      {R"({"w":{"shape":[2],"data_offsets":[0,8]}})", "'dtype'"},
      {R"({"w":{"dtype":"F32","data_offsets":[0,8]}})", "'shape'"},
      {R"({"w":{"dtype":"F32","shape":[2]}})", "'data_offsets'"},
      {R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", "non-negative"},
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", "outside"},
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[-1,7]}})", "'data_offsets'"},
      {R"({"w":[1,2]})", "JSON object"},
      {R"({"__metadata__":{"format":1}})", "__metadata__.format"},
  };
  for (const Case& c : cases) {
    const Status st = open_bytes(dir, testing::safetensors_bytes(c.header, data));
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.header;
    EXPECT_NE(st.message().find(c.expect), std::string::npos) << c.header << " -> " << st.message();
  }
}

}  // namespace
}  // namespace tessera::model
