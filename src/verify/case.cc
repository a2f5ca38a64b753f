#include "verify/case.h"

#include <algorithm>
#include <numeric>

namespace tessera::verify {

namespace {

std::string window_size(int64_t size) { return size < 0 ? "inf" : std::to_string(size); }

std::string join_lengths(const std::vector<int32_t>& lengths) {
  std::string s;
  for (size_t i = 0; i < lengths.size(); ++i) s += (i ? "x" : "") + std::to_string(lengths[i]);
  return s;
}

}  // namespace

int64_t AttentionCase::total_q() const {
  if (!varlen()) return sq;
  return std::accumulate(seqlens_q.begin(), seqlens_q.end(), int64_t{0});
}

int64_t AttentionCase::total_k() const {
  if (!varlen()) return sk;
  return std::accumulate(seqlens_k.begin(), seqlens_k.end(), int64_t{0});
}

void AttentionCase::set_varlen(std::vector<int32_t> q_lens, std::vector<int32_t> k_lens) {
  seqlens_q = std::move(q_lens);
  seqlens_k = std::move(k_lens);
  batch = static_cast<int64_t>(seqlens_q.size());
  sq = *std::max_element(seqlens_q.begin(), seqlens_q.end());
  sk = *std::max_element(seqlens_k.begin(), seqlens_k.end());
}

std::string AttentionCase::name() const {
  std::string n;
  if (varlen()) {
    n = "varlen_q" + join_lengths(seqlens_q) + "_k" + join_lengths(seqlens_k);
  } else {
    n = "B" + std::to_string(batch) + "_Sq" + std::to_string(sq) + "_Sk" + std::to_string(sk);
  }
  n += "_Hq" + std::to_string(hq) + "_Hkv" + std::to_string(hkv) + "_D" + std::to_string(d);
  if (dv != d) n += "_Dv" + std::to_string(dv);
  n += "_" + std::string(dtype_name(dtype));
  if (mask.kind == MaskKind::kCausal) n += "_causal";
  if (mask.kind == MaskKind::kWindow) {
    n += "_win" + window_size(mask.window_left) + "_" + window_size(mask.window_right);
  }
  if (bias != BiasKind::kNone) n += "_bias" + std::string(bias_name(bias));
  if (softcap > 0) n += "_softcap" + std::to_string(static_cast<int>(softcap * 10));
  if (scale) n += "_scale" + std::to_string(static_cast<int>(*scale * 1000));
  if (lse) n += "_lse";
  if (layout != Layout::kBSHD) n += "_" + std::string(layout_name(layout));
  if (nan_rows > 0) n += "_nan" + std::to_string(nan_rows);
  return n;
}

std::string_view layout_name(Layout layout) {
  switch (layout) {
    case Layout::kBSHD:
      return "bshd";
    case Layout::kBSHDPadded:
      return "bshdpad";
    case Layout::kBHSD:
      return "bhsd";
    case Layout::kDStride2:
      return "dstride2";
  }
  return "?";
}

std::string_view bias_name(BiasKind bias) {
  switch (bias) {
    case BiasKind::kNone:
      return "none";
    case BiasKind::kFull:
      return "full";
    case BiasKind::kBroadcast:
      return "bcast";
    case BiasKind::kShared:
      return "shared";
    case BiasKind::kPerHead:
      return "head";
    case BiasKind::kKeyStride0:
      return "key0";
  }
  return "?";
}

uint64_t stable_hash(std::string_view text) {
  constexpr uint64_t kFnvOffset = 14695981039346656037ull;
  constexpr uint64_t kFnvPrime = 1099511628211ull;
  uint64_t h = kFnvOffset;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= kFnvPrime;
  }
  return h;
}

}  // namespace tessera::verify
