#include "cpu_gemm/head_group.h"

#include <algorithm>
#include <limits>

#include "runtime/gemm.h"

namespace tessera::cpu_gemm {

namespace {

// Every carved array starts on its own cache line.
constexpr size_t kAlignBytes = 64;
constexpr int64_t kAlignFloats = kAlignBytes / sizeof(float);
int64_t aligned(int64_t floats) {
  return (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
}

// Can this k or v view feed the GEMM directly as a row-major [Sk, cols] f32
// matrix? Its leading dimension is strides[1].
bool gemm_ready(const TensorView& t) {
  const int64_t rows = t.shape[1], cols = t.shape[3];
  return t.dtype == DType::kF32 && (t.strides[3] == 1 || cols == 1) &&
         (rows <= 1 || t.strides[1] >= cols);
}

// Visible keys [lo, hi) of query i of a sequence with sq queries, sk keys
// (the interval form of Mask::visible; empty when hi <= lo).
void visible_keys(const Mask& m, int64_t i, int64_t sq, int64_t sk, int64_t* lo, int64_t* hi) {
  const int64_t p = i + sk - sq;
  int64_t l = 0, h = sk;
  if (m.kind == MaskKind::kCausal) {
    h = std::min(h, p + 1);
  }
  if (m.kind == MaskKind::kWindow) {
    if (m.window_left >= 0) {
      l = std::max(l, p - m.window_left);
    }
    if (m.window_right >= 0) {
      h = std::min(h, p + m.window_right + 1);
    }
  }
  *lo = std::clamp<int64_t>(l, 0, sk);
  *hi = std::clamp<int64_t>(h, *lo, sk);
}

// Bias values of row (b, h, i) and their stride along keys; broadcast
// dimensions (size 1) read index 0.
const float* bias_row(const TensorView& bias, int64_t b, int64_t h, int64_t i, int64_t* stride) {
  const auto idx = [&](int dim, int64_t full) { return bias.shape[dim] == 1 ? 0 : full; };
  *stride = bias.shape[3] == 1 ? 0 : bias.strides[3];
  return static_cast<const float*>(bias.data) + bias.offset({idx(0, b), idx(1, h), idx(2, i), 0});
}

const void* element(const TensorView& t, int64_t offset) {
  return static_cast<const char*>(t.data) + offset * static_cast<int64_t>(dtype_size(t.dtype));
}

// A [rows, cols] f32 matrix for the GEMM: the view itself when it can be,
// else rows converted into `buffer` (leading dimension cols).
const float* as_gemm_matrix(const TensorView& t, bool convert, int64_t tb, int64_t row0,
                            int64_t rows, int64_t head, float* buffer, int64_t* ld) {
  const int64_t cols = t.shape[3];
  if (!convert) {
    *ld = std::max(t.strides[1], cols);
    return static_cast<const float*>(t.data) + t.offset({tb, row0, head, 0});
  }
  for (int64_t r = 0; r < rows; ++r) {
    row_to_f32(element(t, t.offset({tb, row0 + r, head, 0})), t.dtype, cols, t.strides[3],
               buffer + r * cols);
  }
  *ld = cols;
  return buffer;
}

// The sequence-level facts one block of rows needs.
struct GroupView {
  const AttentionArgs* args;
  SeqRange range;
  int64_t b, tb, kv_head, group, d, dv;
  float scale;
  const float* k = nullptr;  // set when the sequence has keys
  int64_t ldk = 0;
  const float* v = nullptr;
  int64_t ldv = 0;
};

// Writes rows [row0, row0 + n) of the group from the GEMM output tile.
void store_rows(const GroupView& g, const Scratch& s, int64_t row0, int64_t n) {
  const AttentionArgs& a = *g.args;
  const int64_t sq = g.range.q_len;
  for (int64_t row = row0; row < row0 + n; ++row) {
    const int64_t hh = row / sq, i = row % sq;
    const int64_t h = g.kv_head * g.group + hh, qi = g.range.q_begin + i;
    const RowSoftmax& st = s.rows[row];
    const float* o = s.out + row * g.dv;
    const int64_t base = a.out.offset({g.tb, qi, h, 0});
    for (int64_t c = 0; c < g.dv; ++c) {
      const float value = st.fully_masked ? 0.0f : o[c] * st.out_scale;
      store_from_f32(a.out.data, base + c * a.out.strides[3], a.out.dtype, value);
    }
    if (a.lse.present()) {
      static_cast<float*>(a.lse.data)[a.lse.offset({g.tb, h, qi})] = st.lse;
    }
  }
}

// Rows [row0, row0 + n) of one head of the group (or of the whole group when
// there is no mask): scores over the union of their visible keys, softmax,
// then P V.
Status run_block(const GroupView& g, const Scratch& s, int64_t row0, int64_t n) {
  const AttentionArgs& a = *g.args;
  const int64_t sq = g.range.q_len, sk = g.range.k_len;
  int64_t c0 = sk, c1 = 0;
  for (int64_t row = row0; row < row0 + n; ++row) {
    int64_t lo, hi;
    visible_keys(a.mask, row % sq, sq, sk, &lo, &hi);
    if (hi > lo) {
      c0 = std::min(c0, lo), c1 = std::max(c1, hi);
    }
  }
  const int64_t nc = c1 > c0 ? c1 - c0 : 0;
  float* scores = s.scores + row0 * sk + c0;  // leading dimension sk
  if (nc > 0) {
    TESSERA_RETURN_IF_ERROR(sgemm(false, true, n, nc, g.d, g.scale, s.q + row0 * g.d, g.d,
                                  g.k + c0 * g.ldk, g.ldk, 0.0f, scores, sk));
  }
  for (int64_t row = row0; row < row0 + n; ++row) {
    const int64_t hh = row / sq, i = row % sq;
    int64_t lo, hi, bias_stride = 0;
    visible_keys(a.mask, i, sq, sk, &lo, &hi);
    const float* bias = nullptr;
    if (a.bias.present()) {
      bias = bias_row(a.bias, g.b, g.kv_head * g.group + hh, i, &bias_stride) + c0 * bias_stride;
    }
    s.rows[row] =
        softmax_row(scores + (row - row0) * sk, nc, lo - c0, hi - c0, a.softcap, bias, bias_stride);
  }
  if (nc > 0 && g.dv > 0) {
    TESSERA_RETURN_IF_ERROR(sgemm(false, false, n, g.dv, nc, 1.0f, scores, sk, g.v + c0 * g.ldv,
                                  g.ldv, 0.0f, s.out + row0 * g.dv, g.dv));
  } else {
    std::fill(s.out + row0 * g.dv, s.out + (row0 + n) * g.dv, 0.0f);
  }
  store_rows(g, s, row0, n);
  return Status::Ok();
}

}  // namespace

UnitLayout UnitLayout::of(const AttentionArgs& args) {
  const AttentionDims dims = dims_of(args);
  UnitLayout l;
  l.group = dims.hq / dims.hkv;
  l.rows = l.group * dims.sq;
  const bool copy_pays = l.rows >= kCopyKvMinRows;
  l.convert_k = copy_pays || !gemm_ready(args.k);
  l.convert_v = copy_pays || !gemm_ready(args.v);
  l.scores = aligned(l.rows * dims.sk);
  l.q = aligned(l.rows * dims.d);
  l.k = l.convert_k ? aligned(dims.sk * dims.d) : 0;
  l.v = l.convert_v ? aligned(dims.sk * dims.dv) : 0;
  l.out = aligned(l.rows * dims.dv);
  return l;
}

size_t UnitLayout::bytes() const {
  const int64_t floats = scores + q + k + v + out;
  const size_t bytes =
      static_cast<size_t>(floats) * sizeof(float) + static_cast<size_t>(rows) * sizeof(RowSoftmax);
  return (bytes + kAlignBytes - 1) / kAlignBytes * kAlignBytes;  // what the allocator takes
}

Scratch carve(const UnitLayout& l, void* base) {
  Scratch s;
  float* p = static_cast<float*>(base);
  s.scores = p;
  s.q = s.scores + l.scores;
  s.k = s.q + l.q;
  s.v = s.k + l.k;
  s.out = s.v + l.v;
  s.rows = reinterpret_cast<RowSoftmax*>(s.out + l.out);
  return s;
}

Status run_head_group(const AttentionArgs& a, const UnitLayout& layout, int64_t b, int64_t kv_head,
                      const Scratch& s) {
  GroupView g;
  g.args = &a;
  g.range = seq_range(a, b);
  g.b = b;
  g.tb = a.varlen ? 0 : b;  // packed (varlen) tensors have batch dimension 1
  g.kv_head = kv_head;
  g.group = layout.group;
  g.d = a.q.shape[3];
  g.dv = a.v.shape[3];
  g.scale = a.effective_scale();
  const int64_t sq = g.range.q_len, sk = g.range.k_len;
  if (sq == 0) {
    return Status::Ok();
  }
  for (int64_t hh = 0; hh < g.group; ++hh) {
    for (int64_t i = 0; i < sq; ++i) {
      const int64_t offset = a.q.offset({g.tb, g.range.q_begin + i, kv_head * g.group + hh, 0});
      row_to_f32(element(a.q, offset), a.q.dtype, g.d, a.q.strides[3], s.q + (hh * sq + i) * g.d);
    }
  }
  if (sk > 0) {
    g.k = as_gemm_matrix(a.k, layout.convert_k, g.tb, g.range.k_begin, sk, kv_head, s.k, &g.ldk);
    g.v = as_gemm_matrix(a.v, layout.convert_v, g.tb, g.range.k_begin, sk, kv_head, s.v, &g.ldv);
  }
  const int64_t rows = g.group * sq;
  if (a.mask.kind == MaskKind::kNone) {
    return run_block(g, s, 0, rows);
  }
  for (int64_t hh = 0; hh < g.group; ++hh) {
    for (int64_t i0 = 0; i0 < sq; i0 += kMaskedRowBlock) {
      TESSERA_RETURN_IF_ERROR(run_block(g, s, hh * sq + i0, std::min(kMaskedRowBlock, sq - i0)));
    }
  }
  return Status::Ok();
}

}  // namespace tessera::cpu_gemm
