// cpu.flash per-target code: the online-softmax step on one score tile.
//   st [key_count x ld] = S^T = raw q.k: row j is key key0 + j, column c query row c.
// Scores live in log2 units, so exp becomes exp2 (FastExp2): with
// mul = scale * log2(e), s = mul * S. In place, per column c (a query row),
// with the running max m and sum l:
//   plain tile:  m' = max(m, mul * max_j S) ; p = 2^(fma(S, mul, -m'))
//                (one rounding from S to the exponent, as exact as a
//                float pipeline gets; mul > 0 so max commutes with it)
//   transformed: s = mul * S, or cap*log2e * tanh(S * scale / cap) with
//                softcap ; s += bias * log2e ; masked -> -inf ; stored,
//                then m' = max(m, max_j s) ; p = 2^(s - m')
//   alpha = 2^(m - m') ; l' = alpha * l + sum_j p ; st <- p
// (m' as written with tf.headroom = 0; see ScoreTransform for the rest.)
// Columns are independent, so every step is a vertical vector op: the
// layout S^T (keys as rows) is chosen for that.
// A NaN score makes l NaN for good, so the row ends NaN (out and lse).
#if defined(TESSERA_CPU_FLASH_ONLINE_SOFTMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_ONLINE_SOFTMAX_INL_H_
#undef TESSERA_CPU_FLASH_ONLINE_SOFTMAX_INL_H_
#else
#define TESSERA_CPU_FLASH_ONLINE_SOFTMAX_INL_H_
#endif

#include <cstdint>
#include <limits>

#include "cpu_flash/exp2-inl.h"
#include "cpu_flash/flash_params.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Per query row (column of S^T) state, each `ld` floats.
struct SoftmaxRows {
  float* m;         // running max (-inf before any key)
  float* l;         // running sum of exp(s - m)
  float* alpha;     // out: 2^(m_old - m_new), to rescale O
  const float* lo;  // first visible key (sequence-local), as f32
  const float* hi;  // last visible key
};

// Additive bias: element (c, key) at base[row_offset[c] + key * key_stride].
// With row_index (the offsets as int32, when they fit) a score vector's
// bias is one hardware gather; without it, a scalar loop whose 16 stores
// feed one vector load (a store-forwarding stall per vector: MPNet's bias
// cost cpu.flash 30-100% of its attention time that way). A bias laid out
// query-major (query stride 1, as the model layer writes MPNet's) needs
// neither: its lanes are consecutive, one unaligned load.
struct BiasRows {
  const float* base = nullptr;
  const int64_t* row_offset = nullptr;
  int64_t key_stride = 0;
  const int32_t* row_index = nullptr;
  bool contiguous = false;  // row_offset[c + i] == row_offset[c] + i for every lane
};

// log2(e): scores and the running max live in log2 units.
inline constexpr float kLog2e = 1.44269504088896341f;

struct ScoreTransform {
  float scale;    // softmax scale
  float softcap;  // > 0: s = softcap * log2e * tanh(S * scale / softcap)
  // How far (log2 units) the running max may lag the true one: m moves only
  // when a tile's max exceeds it by more, so p <= 2^headroom, and alpha is
  // exactly 1 on most tiles, which lets the AMX path skip rescaling O. 0:
  // m is the exact running max. Any value gives the same softmax (m cancels
  // in O / l, and lse uses the same m and l).
  float headroom = 0.0f;
};

// S^T [key_count x ld] -> P^T in place, columns [0, cols) only (cols a
// multiple of the lanes, <= ld: the columns past a block's last row vector
// are padding no one reads).
template <bool kSoftcap, bool kBias, bool kMasked, class DF>
HWY_NOINLINE void SoftmaxTile(DF df, float* HWY_RESTRICT st, int64_t ld, int64_t cols,
                              int64_t key_count, int64_t key0, ScoreTransform tf, BiasRows bias,
                              SoftmaxRows rows) {
  using V = hn::Vec<DF>;
  constexpr bool kTransform = kSoftcap || kBias || kMasked;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const V neg_inf = hn::Set(df, -std::numeric_limits<float>::infinity());
  const V nan = hn::Set(df, std::numeric_limits<float>::quiet_NaN());
  const V zero = hn::Zero(df);
  const V cap = hn::Set(df, tf.softcap * kLog2e);
  const V log2e = hn::Set(df, kLog2e);
  // Plain tiles scale inside the exponent's FMA; transformed tiles first.
  const V mul = hn::Set(df, kSoftcap ? tf.scale / tf.softcap : tf.scale * kLog2e);
  const V exp_mul = kTransform ? hn::Set(df, 1.0f) : mul;
  const V headroom = hn::Set(df, tf.headroom);
  HWY_ALIGN float gathered[kMaxLanes];
  for (int64_t c = 0; c < cols; c += lanes) {
    V lo = zero, hi = zero;
    if constexpr (kMasked) {
      lo = hn::Load(df, rows.lo + c);
      hi = hn::Load(df, rows.hi + c);
    }
    // Score j of this column chunk, transformed (and stored back) if needed.
    const auto score = [&](int64_t j) HWY_ATTR {
      float* sj = st + j * ld + c;
      V s = hn::Load(df, sj);
      if constexpr (kTransform) {
        if constexpr (kSoftcap) {
          // tanh in Highway does not keep NaN; the reference does.
          s = hn::IfThenElse(hn::IsNaN(s), s, hn::Mul(cap, hn::Tanh(df, hn::Mul(s, mul))));
        } else {
          s = hn::Mul(s, mul);
        }
      }
      if constexpr (kBias) {
        const int64_t key_off = (key0 + j) * bias.key_stride;
        if (bias.contiguous) {
          s = hn::MulAdd(hn::LoadU(df, bias.base + bias.row_offset[c] + key_off), log2e, s);
        } else if (bias.row_index != nullptr) {
          const hn::RebindToSigned<DF> di;
          const auto index =
              hn::Add(hn::Load(di, bias.row_index + c), hn::Set(di, static_cast<int32_t>(key_off)));
          s = hn::MulAdd(hn::GatherIndex(df, bias.base, index), log2e, s);
        } else {
          for (int64_t i = 0; i < lanes; ++i) {
            gathered[i] = bias.base[bias.row_offset[c + i] + key_off];
          }
          s = hn::MulAdd(hn::Load(df, gathered), log2e, s);
        }
      }
      if constexpr (kMasked) {
        const V key = hn::Set(df, static_cast<float>(key0 + j));
        s = hn::IfThenElse(hn::And(hn::Ge(key, lo), hn::Le(key, hi)), s, neg_inf);
      }
      if constexpr (kTransform) hn::Store(s, df, sj);
      return s;
    };
    // Four running maxima: one chain of dependent max instructions would
    // wait out their latency on every key (NaN is tracked below, not
    // through the max: Max keeps its second operand then).
    V mx0 = neg_inf, mx1 = neg_inf, mx2 = neg_inf, mx3 = neg_inf;
    int64_t j = 0;
    for (; j + 4 <= key_count; j += 4) {
      mx0 = hn::Max(score(j), mx0);
      mx1 = hn::Max(score(j + 1), mx1);
      mx2 = hn::Max(score(j + 2), mx2);
      mx3 = hn::Max(score(j + 3), mx3);
    }
    for (; j < key_count; ++j) mx0 = hn::Max(score(j), mx0);
    V mx = hn::Max(hn::Max(mx0, mx1), hn::Max(mx2, mx3));
    if constexpr (!kTransform) mx = hn::Mul(mx, mul);
    const V m_old = hn::Load(df, rows.m + c);
    const V m_new = hn::IfThenElse(hn::Gt(mx, hn::Add(m_old, headroom)), mx, m_old);
    // A row with nothing visible yet keeps m = -inf; subtract 0 instead so
    // 2^(-inf - 0) = 0 rather than 2^(-inf + inf) = NaN.
    const V neg_m = hn::Neg(hn::IfThenElse(hn::Eq(m_new, neg_inf), zero, m_new));
    const V alpha = FastExp2(df, hn::Add(m_old, neg_m));
    V sum0 = zero, sum1 = zero;          // two chains, as the maxima above
    auto nan_seen = hn::Lt(zero, zero);  // all false
    const auto probability = [&](int64_t j) HWY_ATTR {
      float* sj = st + j * ld + c;
      const V s = hn::Load(df, sj);
      // A NaN s gives p = NaN and a NaN sum where FastExp2 keeps NaN.
      if constexpr (!kExp2KeepsNaN) nan_seen = hn::Or(nan_seen, hn::IsNaN(s));
      const V p = FastExp2(df, hn::MulAdd(s, exp_mul, neg_m));
      hn::Store(p, df, sj);
      return p;
    };
    for (j = 0; j + 2 <= key_count; j += 2) {
      sum0 = hn::Add(sum0, probability(j));
      sum1 = hn::Add(sum1, probability(j + 1));
    }
    if (j < key_count) sum0 = hn::Add(sum0, probability(j));
    const V sum = hn::Add(sum0, sum1);
    const V l = hn::MulAdd(hn::Load(df, rows.l + c), alpha, sum);
    hn::Store(hn::IfThenElse(nan_seen, nan, l), df, rows.l + c);
    hn::Store(m_new, df, rows.m + c);
    hn::Store(alpha, df, rows.alpha + c);
  }
}

// Runtime flags -> the instantiation (8 of them).
template <class DF>
HWY_INLINE void SoftmaxTileDispatch(DF df, bool softcap, bool has_bias, bool masked,
                                    float* HWY_RESTRICT st, int64_t ld, int64_t cols,
                                    int64_t key_count, int64_t key0, ScoreTransform tf,
                                    BiasRows bias, SoftmaxRows rows) {
  const int which = (softcap ? 4 : 0) | (has_bias ? 2 : 0) | (masked ? 1 : 0);
  switch (which) {
    case 0:
      return SoftmaxTile<false, false, false>(df, st, ld, cols, key_count, key0, tf, bias, rows);
    case 1:
      return SoftmaxTile<false, false, true>(df, st, ld, cols, key_count, key0, tf, bias, rows);
    case 2:
      return SoftmaxTile<false, true, false>(df, st, ld, cols, key_count, key0, tf, bias, rows);
    case 3:
      return SoftmaxTile<false, true, true>(df, st, ld, cols, key_count, key0, tf, bias, rows);
    case 4:
      return SoftmaxTile<true, false, false>(df, st, ld, cols, key_count, key0, tf, bias, rows);
    case 5:
      return SoftmaxTile<true, false, true>(df, st, ld, cols, key_count, key0, tf, bias, rows);
    case 6:
      return SoftmaxTile<true, true, false>(df, st, ld, cols, key_count, key0, tf, bias, rows);
    default:
      return SoftmaxTile<true, true, true>(df, st, ld, cols, key_count, key0, tf, bias, rows);
  }
}

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
