#include "verify/plain_case.h"

#include "runtime/bounded_text.h"
#include "runtime/size_limits.h"
#include "verify/case_geometry.h"
#include "verify/normal_rng.h"

namespace tessera::verify {

namespace {

uint64_t tensor_bytes(const TensorGeometry& g) {
  return g.present() ? static_cast<uint64_t>(g.span()) * dtype_size(g.dtype) : 0;
}

Status allocate(TrackingAllocator& alloc, const TensorGeometry& g, Buffer* out) {
  if (!g.present()) return Status::Ok();
  return Buffer::allocate(alloc, tensor_bytes(g), kPlainOwner, out);
}

void fill(Buffer& buf, DType dtype, NormalRng& rng) {
  const int64_t n = static_cast<int64_t>(buf.bytes() / dtype_size(dtype));
  for (int64_t i = 0; i < n; ++i) store_from_f32(buf.data(), i, dtype, rng.next());
}

}  // namespace

uint64_t PlainCase::bytes(const AttentionCase& c) {
  const CaseGeometry g = case_geometry(c, Packing::kDense);
  uint64_t total = 0;
  for (const TensorGeometry* t : {&g.q, &g.k, &g.v, &g.out, &g.lse, &g.bias}) {
    total += tensor_bytes(*t);
  }
  return total;
}

Status PlainCase::create(const AttentionCase& c, TrackingAllocator& alloc, PlainCase* out) {
  TESSERA_RETURN_IF_ERROR(check_host_bytes(
      bytes(c), "the tensors of shape " + quote_bounded(c.text.empty() ? c.name() : c.text)));
  const CaseGeometry g = case_geometry(c, Packing::kDense);
  PlainCase p;
  TESSERA_RETURN_IF_ERROR(allocate(alloc, g.q, &p.q_));
  TESSERA_RETURN_IF_ERROR(allocate(alloc, g.k, &p.k_));
  TESSERA_RETURN_IF_ERROR(allocate(alloc, g.v, &p.v_));
  TESSERA_RETURN_IF_ERROR(allocate(alloc, g.out, &p.out_));
  TESSERA_RETURN_IF_ERROR(allocate(alloc, g.lse, &p.lse_));
  TESSERA_RETURN_IF_ERROR(allocate(alloc, g.bias, &p.bias_));
  NormalRng rng(c.seed);
  fill(p.q_, c.dtype, rng);
  fill(p.k_, c.dtype, rng);
  fill(p.v_, c.dtype, rng);
  fill(p.bias_, DType::kF32, rng);
  p.set_args(c, p.q_.data(), p.k_.data(), p.v_.data(), p.out_.data(), p.lse_.data(),
             p.bias_.data());
  *out = std::move(p);
  return Status::Ok();
}

PlainCase PlainCase::placeholder(const AttentionCase& c) {
  static char placeholder;  // validate() and check() read shapes only
  PlainCase p;
  p.set_args(c, &placeholder, &placeholder, &placeholder, &placeholder, &placeholder, &placeholder);
  return p;
}

void PlainCase::set_args(const AttentionCase& c, void* q, void* k, void* v, void* out, void* lse,
                         void* bias) {
  const CaseGeometry g = case_geometry(c, Packing::kDense);
  args_ = AttentionArgs{};
  args_.q = g.q.view(q);
  args_.k = g.k.view(k);
  args_.v = g.v.view(v);
  args_.out = g.out.view(out);
  if (g.lse.present()) args_.lse = g.lse.view(lse);
  if (g.bias.present()) args_.bias = bias_view(c, g.bias.view(bias));
  args_.mask = c.mask;
  args_.scale = c.scale;
  args_.softcap = c.softcap;
  if (c.varlen()) {
    cu_q_.assign(1, 0);
    cu_k_.assign(1, 0);
    for (size_t b = 0; b < c.seqlens_q.size(); ++b) {
      cu_q_.push_back(cu_q_.back() + c.seqlens_q[b]);
      cu_k_.push_back(cu_k_.back() + c.seqlens_k[b]);
    }
    args_.varlen = Varlen{cu_q_.data(), cu_k_.data(), c.batch};
  }
}

}  // namespace tessera::verify
