#include "xla/compile_options.h"

#include <cstdint>

namespace tessera::xla {

namespace {

// Protobuf wire format: a key is (field << 3) | wire type; integers are
// base-128 varints, negative int64 as their 10-byte two's complement.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kLengthDelimited = 2;

void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void put_int64_field(std::string& out, uint32_t field, int64_t value) {
  put_varint(out, (field << 3) | kVarint);
  put_varint(out, static_cast<uint64_t>(value));
}

void put_message_field(std::string& out, uint32_t field, const std::string& message) {
  put_varint(out, (field << 3) | kLengthDelimited);
  put_varint(out, message.size());
  out += message;
}

// Field numbers of xla/pjrt/proto/compile_options.proto.
constexpr uint32_t kCompileOptionsExecutableBuildOptions = 3;
constexpr uint32_t kBuildOptionsDeviceOrdinal = 1;
constexpr uint32_t kBuildOptionsNumReplicas = 4;
constexpr uint32_t kBuildOptionsNumPartitions = 5;

}  // namespace

std::string single_device_compile_options() {
  std::string build;
  put_int64_field(build, kBuildOptionsDeviceOrdinal, -1);
  put_int64_field(build, kBuildOptionsNumReplicas, 1);
  put_int64_field(build, kBuildOptionsNumPartitions, 1);
  std::string options;
  put_message_field(options, kCompileOptionsExecutableBuildOptions, build);
  return options;
}

}  // namespace tessera::xla
