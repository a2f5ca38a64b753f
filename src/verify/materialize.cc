#include "verify/materialize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "verify/normal_rng.h"

namespace tessera::verify {

namespace {

using Shape = std::array<int64_t, kMaxRank>;

// At least one float: an empty tensor (Sq or Sk = 0) still gets a non-null
// address, which the contract asks of every view.
Status allocate_floats(TrackingAllocator& alloc, int64_t n, Buffer* out) {
  return Buffer::allocate(alloc, static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(float),
                          kCaseOwner, out);
}

// Writes the logical values into the tensor under test, converted to its dtype.
void store_view(const GuardedTensor& t, const float* logical) {
  const TensorView& v = t.view();
  t.for_each_element(
      [&](int64_t i, int64_t offset) { store_from_f32(v.data, offset, v.dtype, logical[i]); });
}

Status check_view_equals(const GuardedTensor& t, const float* logical, std::string_view field) {
  TESSERA_RETURN_IF_ERROR(t.check_fill(field));
  const TensorView& v = t.view();
  Status status;
  t.for_each_element([&](int64_t i, int64_t offset) {
    const float got = load_as_f32(v.data, offset, v.dtype);
    const bool same = got == logical[i] || (std::isnan(got) && std::isnan(logical[i]));
    if (status.ok() && !same) {
      status = internal_error(std::string(field) + " (an input) was modified: element " +
                              std::to_string(i) + " = " + std::to_string(got) + ", was " +
                              std::to_string(logical[i]));
    }
  });
  return status;
}

}  // namespace

Status MaterializedCase::create(const AttentionCase& spec, TrackingAllocator& alloc,
                                MaterializedCase* out) {
  MaterializedCase m;
  m.spec_ = spec;
  TESSERA_RETURN_IF_ERROR(m.allocate(alloc));
  m.fill_inputs();
  m.args_ = m.views(m.q_.view(), m.k_.view(), m.v_.view(), m.bias_.view());
  m.args_.out = m.out_.view();
  m.args_.lse = m.lse_.view();
  m.poison_outputs();
  *out = std::move(m);
  return Status::Ok();
}

Status MaterializedCase::allocate(TrackingAllocator& alloc) {
  const AttentionCase& c = spec_;
  const CaseGeometry g = case_geometry(c, Packing::kAsCase);
  TESSERA_RETURN_IF_ERROR(allocate_floats(alloc, g.q.numel(), &q_log_));
  TESSERA_RETURN_IF_ERROR(allocate_floats(alloc, g.k.numel(), &k_log_));
  TESSERA_RETURN_IF_ERROR(allocate_floats(alloc, g.v.numel(), &v_log_));
  const struct {
    GuardedTensor* t;
    const TensorGeometry& g;
    uint8_t fill;
  } tensors[] = {{&q_, g.q, kInputFillByte}, {&k_, g.k, kInputFillByte},
                 {&v_, g.v, kInputFillByte}, {&out_, g.out, kGuardByte},
                 {&lse_, g.lse, kGuardByte}, {&bias_, g.bias, kInputFillByte}};
  for (const auto& t : tensors) {
    if (!t.g.present()) continue;
    TESSERA_RETURN_IF_ERROR(GuardedTensor::create(alloc, kCaseOwner, t.g.dtype, t.g.rank, t.g.shape,
                                                  t.g.strides, t.fill, t.t));
  }
  bias_stored_ = g.bias;
  if (g.bias.present()) {
    TESSERA_RETURN_IF_ERROR(allocate_floats(alloc, g.bias.numel(), &bias_log_));
  }
  if (c.varlen()) {
    const size_t bytes = (c.seqlens_q.size() + 1) * sizeof(int32_t);
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(alloc, bytes, kCaseOwner, &cu_q_));
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(alloc, bytes, kCaseOwner, &cu_k_));
    int32_t* cq = cu_q_.as<int32_t>();
    int32_t* ck = cu_k_.as<int32_t>();
    cq[0] = ck[0] = 0;
    for (size_t b = 0; b < c.seqlens_q.size(); ++b) {
      cq[b + 1] = cq[b] + c.seqlens_q[b];
      ck[b + 1] = ck[b] + c.seqlens_k[b];
    }
  }
  return Status::Ok();
}

void MaterializedCase::fill_inputs() {
  const AttentionCase& c = spec_;
  NormalRng rng(c.seed);
  auto fill = [&](Buffer& buf, const GuardedTensor& t, DType dtype) {
    float* x = buf.as<float>();
    const int64_t n = t.view().numel();
    for (int64_t i = 0; i < n; ++i) x[i] = round_to_dtype(rng.next(), dtype);
  };
  fill(q_log_, q_, c.dtype);
  fill(k_log_, k_, c.dtype);
  fill(v_log_, v_, c.dtype);
  if (bias_.present()) {
    fill(bias_log_, bias_, DType::kF32);
    if (c.bias == BiasKind::kKeyStride0 && c.sk > 1) {
      bias_log_.as<float>()[1] = -std::numeric_limits<float>::infinity();  // a masked key
    }
  }
  // NaN rows: one element of a query row, rows spread over batch and heads.
  const int64_t rows = c.rows_batch() * c.total_q() * c.hq;
  constexpr int64_t kRowStep = 7919;  // a prime: consecutive NaN rows land far apart
  for (int k = 0; k < c.nan_rows; ++k) {
    const int64_t row = (static_cast<int64_t>(c.seed % 1000) + k * kRowStep) % rows;
    q_log_.as<float>()[row * c.d + k % c.d] = std::numeric_limits<float>::quiet_NaN();
  }
  store_view(q_, q_log_.as<float>());
  store_view(k_, k_log_.as<float>());
  store_view(v_, v_log_.as<float>());
  if (bias_.present()) store_view(bias_, bias_log_.as<float>());
}

AttentionArgs MaterializedCase::views(const TensorView& q, const TensorView& k, const TensorView& v,
                                      const TensorView& bias) const {
  AttentionArgs a;
  a.q = q;
  a.k = k;
  a.v = v;
  a.bias = bias_view(spec_, bias);
  a.mask = spec_.mask;
  a.scale = spec_.scale;
  a.softcap = spec_.softcap;
  if (spec_.varlen()) {
    a.varlen = Varlen{cu_q_.as<const int32_t>(), cu_k_.as<const int32_t>(), spec_.batch};
  }
  return a;
}

AttentionArgs MaterializedCase::logical_args(float* out, float* lse) const {
  const AttentionCase& c = spec_;
  const int64_t r = c.rows_batch(), tq = c.total_q(), tk = c.total_k();
  TensorView bias;
  if (bias_.present()) {
    const Shape& s = bias_stored_.shape;
    bias = TensorView::contiguous(bias_log_.data(), DType::kF32, {s[0], s[1], s[2], s[3]});
  }
  AttentionArgs a =
      views(TensorView::contiguous(q_log_.data(), DType::kF32, {r, tq, c.hq, c.d}),
            TensorView::contiguous(k_log_.data(), DType::kF32, {r, tk, c.hkv, c.d}),
            TensorView::contiguous(v_log_.data(), DType::kF32, {r, tk, c.hkv, c.dv}), bias);
  a.out = TensorView::contiguous(out, DType::kF32, {r, tq, c.hq, c.dv});
  // lse is [R, Hq, Tq] to the contract; stored in row order (R, Tq, Hq).
  a.lse.data = lse;
  a.lse.dtype = DType::kF32;
  a.lse.rank = 3;
  a.lse.shape = {r, c.hq, tq, 0};
  a.lse.strides = {tq * c.hq, 1, c.hq, 0};
  return a;
}

int64_t MaterializedCase::rows() const { return spec_.rows_batch() * spec_.total_q() * spec_.hq; }

std::string MaterializedCase::row_name(int64_t row) const {
  const int64_t h = row % spec_.hq;
  const int64_t packed = row / spec_.hq;
  int64_t b = packed / spec_.total_q();
  int64_t i = packed % spec_.total_q();
  if (spec_.varlen()) {
    const int32_t* cq = cu_q_.as<const int32_t>();
    b = 0;
    while (cq[b + 1] <= i) ++b;
    i -= cq[b];
  }
  return "[b=" + std::to_string(b) + ", i=" + std::to_string(i) + ", h=" + std::to_string(h) + "]";
}

void MaterializedCase::poison_outputs() {
  out_.fill_view(kPoisonByte);
  if (lse_.present()) lse_.fill_view(kPoisonByte);
}

Status MaterializedCase::check_output_guards() const {
  TESSERA_RETURN_IF_ERROR(out_.check_fill("out"));
  if (lse_.present()) TESSERA_RETURN_IF_ERROR(lse_.check_fill("lse"));
  return Status::Ok();
}

Status MaterializedCase::check_outputs_poisoned() const {
  TESSERA_RETURN_IF_ERROR(out_.check_view_holds("out", kPoisonByte));
  if (lse_.present()) TESSERA_RETURN_IF_ERROR(lse_.check_view_holds("lse", kPoisonByte));
  return Status::Ok();
}

Status MaterializedCase::check_inputs_untouched() const {
  TESSERA_RETURN_IF_ERROR(check_view_equals(q_, q_log_.as<const float>(), "q"));
  TESSERA_RETURN_IF_ERROR(check_view_equals(k_, k_log_.as<const float>(), "k"));
  TESSERA_RETURN_IF_ERROR(check_view_equals(v_, v_log_.as<const float>(), "v"));
  if (bias_.present()) {
    TESSERA_RETURN_IF_ERROR(check_view_equals(bias_, bias_log_.as<const float>(), "bias"));
  }
  return Status::Ok();
}

void MaterializedCase::read_out(float* dst) const {
  const TensorView& v = out_.view();
  out_.for_each_element(
      [&](int64_t i, int64_t offset) { dst[i] = load_as_f32(v.data, offset, v.dtype); });
}

void MaterializedCase::read_lse(float* dst) const {
  const TensorView& v = lse_.view();
  const int64_t r = spec_.rows_batch(), tq = spec_.total_q(), hq = spec_.hq;
  for (int64_t b = 0; b < r; ++b) {
    for (int64_t i = 0; i < tq; ++i) {
      for (int64_t h = 0; h < hq; ++h) {
        dst[(b * tq + i) * hq + h] = static_cast<const float*>(v.data)[v.offset({b, h, i})];
      }
    }
  }
}

OwnedCase::OwnedCase(const AttentionCase& spec) {
  status_ = MaterializedCase::create(spec, alloc_, &m_);
  args = m_.args();
}

std::vector<float> OwnedCase::out() const {
  std::vector<float> values(static_cast<size_t>(m_.rows() * m_.spec().dv));
  if (status_.ok()) m_.read_out(values.data());
  return values;
}

}  // namespace tessera::verify
