// How one attention call is cut into executions of cached programs.
//   group: sequences of equal lengths that run together (dense: a chunk of
//          the batch; varlen: one sequence), keys staged once per group;
//   tile:  a block of tq query rows of a group against all its keys.
// Lengths are padded to buckets so that one executable serves many shapes,
// and tq is chosen so that the f32 scores of a tile stay under
// kTileTempBytes: the B x H x Sq x Sk matrix is never built for long S.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/attention.h"
#include "xla/stablehlo_program.h"

namespace tessera::xla {

// Device temporaries of one tile (ProgramKey::tile_temp_bytes): scores and
// their kin.
inline constexpr size_t kTileTempBytes = size_t{64} << 20;

struct Group {
  int64_t first = 0, count = 0;  // sequences first .. first + count
  int64_t q_len = 0, k_len = 0;  // true lengths, the same for every sequence
};

// Lengths padded: powers of two from 16 up to 1024, then multiples of 1024.
int64_t bucket(int64_t n);

// The groups of valid args; a reason when even one query row of one
// sequence exceeds kTileTempBytes.
std::vector<Group> groups_of(const AttentionArgs& args);
ProgramKey key_for(const AttentionArgs& args, const Group& group);
// Empty when the group fits; else why not, with the numbers.
std::string tile_limit_reason(const ProgramKey& key);

// Host staging (tracked) for one group: q, bias, out and lse tiles, k and v.
size_t staging_bytes(const ProgramKey& key);
// What one group holds at its peak: host staging, the same tensors again on
// the PJRT device (host memory with the CPU plugin) and the score-sized
// intermediates of the program.
size_t group_workspace_bytes(const ProgramKey& key);

}  // namespace tessera::xla
