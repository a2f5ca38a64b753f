// The shape syntax shared by `backends --explain` and `bench attention`:
//   "B=2,Sq=128,Sk=128,Hq=8,Hkv=8,D=64,dtype=bf16,mask=causal"
// Keys: B, S (= Sq = Sk), Sq, Sk, H (= Hq = Hkv), Hq, Hkv, D, Dv, dtype
// (f32|bf16|f16), mask (none|causal|window), window=L:R, layout (bshd|bhsd),
// lse=0|1, bias=0|1, softcap=F, varlen=0|1 (B sequences packed, THD).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/tessera.h"

namespace tessera::cli {

struct ShapeSpec {
  int64_t b = 1, sq = 128, sk = 128, hq = 8, hkv = 8, d = 64, dv = -1;  // dv -1: = d
  DType dtype = DType::kF32;
  Mask mask;
  bool bhsd = false;
  bool lse = false;
  bool bias = false;
  bool varlen = false;
  float softcap = 0.0f;
  std::string text;  // as given, for reports
};

Status parse_shape(const std::string& text, ShapeSpec* out);
// Shapes joined by ';'.
Status parse_shape_list(const std::string& text, std::vector<ShapeSpec>* out);

// Tensors for one shape, owned through the tracking allocator, filled with
// N(0, 1) values from `seed`. args() points into them.
class Problem {
 public:
  static Status create(const ShapeSpec& spec, TrackingAllocator& alloc, uint64_t seed,
                       Problem* out);
  // Args with placeholder data pointers: for explain(), which reads no data.
  static AttentionArgs placeholder_args(const ShapeSpec& spec);
  const AttentionArgs& args() const { return args_; }
  // Moves the tensors to CUDA device `device` (tracked device memory); the
  // cu_seqlens stay on the host, as the contract says. CUDA builds only.
  Status to_device(Context& ctx, int device);

 private:
  Buffer q_, k_, v_, out_, lse_, bias_;
  std::vector<int32_t> cu_q_, cu_k_;
  AttentionArgs args_;
};

}  // namespace tessera::cli
