// Test helpers for cpu.flash: random attention problems in any dtype and
// layout, run on a backend, compared element by element with reference.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/backend.h"

namespace tessera::flash_test {

enum class Layout : uint8_t {
  kBSHD,     // contiguous [B, S, H, D]
  kBHSD,     // memory [B, H, S, D], viewed through strides
  kStrided,  // BSHD with gaps after every row and D read with stride 2
};
enum class BiasKind : uint8_t { kNone, kFull, kPerKey /* [1, 1, 1, Sk] */, kPerHead };

struct Case {
  int64_t batch = 1, sq = 1, sk = 1, hq = 1, hkv = 1, d = 16, dv = 16;
  DType dtype = DType::kF32;
  Mask mask;
  BiasKind bias = BiasKind::kNone;
  std::vector<int32_t> seqlens_q, seqlens_k;  // varlen when non-empty
  float softcap = 0.0f;
  std::optional<float> scale;
  bool lse = false;
  Layout layout = Layout::kBSHD;
  int64_t nan_q_row = -1;  // a q row (packed row index, head 0) set to NaN
  uint64_t seed = 1;
  std::string name() const;
};

// Owns the tensors of one case; args() views them.
class Problem {
 public:
  explicit Problem(const Case& c);
  AttentionArgs args(bool reference_out) const;
  // out as f32 in [row, head, dv] order (rows = packed query rows).
  std::vector<float> out(bool reference_out) const;
  std::vector<float> lse(bool reference_out) const;
  // The reference output for |V| (same scores): sum_j p_j |v_j| per element,
  // [row, head, dv] order; empty if the reference fails.
  std::vector<float> abs_v_weighted_out();
  // Refills the backend's out and lse with NaN sentinels.
  void poison_out();
  const Case& c() const { return c_; }

 private:
  struct Tensor {
    std::vector<uint8_t> bytes;
    TensorView view;
  };
  // Random values (or NaN sentinels when !random) in `layout`.
  static std::vector<float> values_of(const TensorView& v);
  Tensor make(int64_t b, int64_t s, int64_t h, int64_t d, DType dtype, bool random, Layout layout);
  Case c_;
  Tensor q_, k_, v_, out_, ref_out_, bias_;
  std::vector<float> lse_, ref_lse_;
  std::vector<int32_t> cu_q_, cu_k_;
  int64_t total_q_ = 0;
  uint64_t streams_ = 0;  // each tensor draws from its own random stream
};

// Runs reference once, then `backend` once per Highway target this CPU
// supports (hwy::SetSupportedTargetsForTest), and returns "" when every
// element of every run is within tolerance, else one line per failing target
// naming the worst element. Also fails on a workspace leak.
std::string compare_on_all_targets(Backend& backend, const Case& c, int threads = 2);

}  // namespace tessera::flash_test
