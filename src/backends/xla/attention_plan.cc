#include "xla/attention_plan.h"

#include <algorithm>

namespace tessera::xla {

namespace {

constexpr int64_t kMinBucket = 16;
constexpr int64_t kLargeBucket = 1024;

}  // namespace

int64_t bucket(int64_t n) {
  if (n <= kLargeBucket) {
    int64_t b = kMinBucket;
    while (b < n) b *= 2;
    return b;
  }
  return (n + kLargeBucket - 1) / kLargeBucket * kLargeBucket;
}

std::vector<Group> groups_of(const AttentionArgs& args) {
  const AttentionDims d = dims_of(args);
  std::vector<Group> groups;
  if (args.varlen) {
    for (int64_t b = 0; b < d.batch; ++b) {
      const SeqRange r = seq_range(args, b);
      if (r.q_len > 0) groups.push_back({b, 1, r.q_len, r.k_len});
    }
    return groups;
  }
  if (d.sq == 0 || d.batch == 0) return groups;
  // Halve the batch chunk until one query row of every sequence in it fits.
  int64_t chunk = d.batch;
  while (chunk > 1) {
    Group probe{0, chunk, 1, d.sk};
    if (key_for(args, probe).tile_temp_bytes() <= kTileTempBytes) break;
    chunk = (chunk + 1) / 2;
  }
  for (int64_t first = 0; first < d.batch; first += chunk) {
    groups.push_back({first, std::min(chunk, d.batch - first), d.sq, d.sk});
  }
  return groups;
}

ProgramKey key_for(const AttentionArgs& args, const Group& group) {
  const AttentionDims d = dims_of(args);
  ProgramKey key;
  key.dtype = args.q.dtype;
  key.batch = group.count;
  key.sk = bucket(group.k_len);
  key.hq = d.hq;
  key.hkv = d.hkv;
  key.d = d.d;
  key.dv = d.dv;
  key.has_softcap = args.softcap > 0;
  key.has_bias = args.bias.present();
  key.tq = bucket(group.q_len);
  while (key.tq > 1 && key.tile_temp_bytes() > kTileTempBytes) key.tq = (key.tq + 1) / 2;
  return key;
}

std::string tile_limit_reason(const ProgramKey& key) {
  if (key.tile_temp_bytes() <= kTileTempBytes) return "";
  return "one query row's f32 temporaries (B=" + std::to_string(key.batch) +
         " x Hq=" + std::to_string(key.hq) + " x Sk=" + std::to_string(key.sk) +
         " scores and their kin, " + std::to_string(key.tile_temp_bytes()) +
         " bytes) exceed the xla tile limit of " + std::to_string(kTileTempBytes) + " bytes";
}

size_t staging_bytes(const ProgramKey& k) {
  const size_t e = dtype_size(k.dtype);
  const auto n = [](int64_t v) { return static_cast<size_t>(v); };
  size_t bytes = n(k.batch * k.tq * k.hq * k.d) * e;      // q tile
  bytes += n(k.batch * k.sk * k.hkv * (k.d + k.dv)) * e;  // k, v
  bytes += n(k.batch * k.tq * k.hq * k.dv) * e;           // out tile
  bytes += n(k.batch * k.hq * k.tq) * sizeof(float);      // lse tile
  if (k.has_bias) bytes += n(k.batch * k.hq * k.tq * k.sk) * sizeof(float);
  return bytes;
}

size_t group_workspace_bytes(const ProgramKey& key) {
  return 2 * staging_bytes(key) + key.temp_bytes();
}

}  // namespace tessera::xla
