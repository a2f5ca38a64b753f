// Validation of AttentionArgs and the sizes derived from them. Every message
// names the field and the values, so the caller can fix the call.
#include <cmath>
#include <sstream>
#include <string>

#include "tessera/attention.h"

namespace tessera {

namespace {

std::string shape_str(const TensorView& t) {
  std::ostringstream os;
  os << "[";
  for (int d = 0; d < t.rank; ++d) os << (d ? ", " : "") << t.shape[d];
  os << "]";
  return os.str();
}

Status check_tensor(const TensorView& t, const char* field, int rank, bool allow_zero_stride) {
  if (t.rank != rank) {
    return invalid_argument(std::string(field) + " must have rank " + std::to_string(rank) +
                            ", got rank " + std::to_string(t.rank) + " " + shape_str(t));
  }
  if (t.data == nullptr) return invalid_argument(std::string(field) + ".data is null");
  bool empty = false;
  for (int d = 0; d < rank; ++d) {
    if (t.shape[d] < 0) {
      return invalid_argument(std::string(field) + ".shape[" + std::to_string(d) +
                              "] = " + std::to_string(t.shape[d]) + " is negative");
    }
    empty = empty || t.shape[d] == 0;
  }
  // No element of an empty tensor is read or written, so its strides are not
  // either; numpy and torch give empty tensors zero strides.
  if (empty) return Status::Ok();
  for (int d = 0; d < rank; ++d) {
    const bool bad_stride = allow_zero_stride ? t.strides[d] < 0 : t.strides[d] <= 0;
    if (bad_stride && t.shape[d] > 1) {
      return invalid_argument(std::string(field) + ".strides[" + std::to_string(d) +
                              "] = " + std::to_string(t.strides[d]) + " must be " +
                              (allow_zero_stride ? ">= 0" : "> 0"));
    }
  }
  return Status::Ok();
}

Status expect_dim(const TensorView& t, const char* field, int d, const char* name, int64_t expected,
                  const char* source) {
  if (t.shape[d] == expected) return Status::Ok();
  return invalid_argument(std::string(field) + ".shape[" + std::to_string(d) + "] (" + name +
                          ") = " + std::to_string(t.shape[d]) + " but " + source + " gives " +
                          std::to_string(expected));
}

Status validate_varlen(const AttentionArgs& a) {
  const Varlen& vl = *a.varlen;
  if (vl.batch < 1) {
    return invalid_argument("varlen.batch = " + std::to_string(vl.batch) + " must be >= 1");
  }
  if (vl.cu_seqlens_q == nullptr) return invalid_argument("varlen.cu_seqlens_q is null");
  if (vl.cu_seqlens_k == nullptr) return invalid_argument("varlen.cu_seqlens_k is null");
  if (a.q.shape[0] != 1 || a.k.shape[0] != 1) {
    return invalid_argument("varlen needs packed q and k with shape[0] = 1, got q.shape[0] = " +
                            std::to_string(a.q.shape[0]) +
                            ", k.shape[0] = " + std::to_string(a.k.shape[0]));
  }
  const struct {
    const int32_t* cu;
    const char* name;
    int64_t total;
  } arrays[] = {{vl.cu_seqlens_q, "varlen.cu_seqlens_q", a.q.shape[1]},
                {vl.cu_seqlens_k, "varlen.cu_seqlens_k", a.k.shape[1]}};
  for (const auto& arr : arrays) {
    if (arr.cu[0] != 0) {
      return invalid_argument(std::string(arr.name) + "[0] = " + std::to_string(arr.cu[0]) +
                              " must be 0");
    }
    for (int64_t b = 0; b < vl.batch; ++b) {
      if (arr.cu[b + 1] < arr.cu[b]) {
        return invalid_argument(std::string(arr.name) + " decreases at " + std::to_string(b + 1) +
                                ": " + std::to_string(arr.cu[b]) + " -> " +
                                std::to_string(arr.cu[b + 1]));
      }
    }
    if (arr.cu[vl.batch] != arr.total) {
      return invalid_argument(std::string(arr.name) + "[" + std::to_string(vl.batch) +
                              "] = " + std::to_string(arr.cu[vl.batch]) +
                              " but the packed tensor has " + std::to_string(arr.total) + " rows");
    }
  }
  return Status::Ok();
}

}  // namespace

float AttentionArgs::effective_scale() const {
  return scale ? *scale : 1.0f / std::sqrt(static_cast<float>(q.shape[3]));
}

Status validate(const AttentionArgs& a) {
  TESSERA_RETURN_IF_ERROR(check_tensor(a.q, "q", 4, true));
  TESSERA_RETURN_IF_ERROR(check_tensor(a.k, "k", 4, true));
  TESSERA_RETURN_IF_ERROR(check_tensor(a.v, "v", 4, true));
  TESSERA_RETURN_IF_ERROR(check_tensor(a.out, "out", 4, false));
  for (const auto* t : {&a.k, &a.v, &a.out}) {
    if (t->dtype != a.q.dtype) {
      const char* name = t == &a.k ? "k" : t == &a.v ? "v" : "out";
      return invalid_argument(std::string(name) + ".dtype = " + std::string(dtype_name(t->dtype)) +
                              " but q.dtype = " + std::string(dtype_name(a.q.dtype)));
    }
    if (!(t->device == a.q.device)) {
      return invalid_argument("tensors on different devices: q on " + a.q.device.to_string() +
                              ", another on " + t->device.to_string());
    }
  }
  const int64_t b = a.q.shape[0], sq = a.q.shape[1], hq = a.q.shape[2], d = a.q.shape[3];
  const int64_t sk = a.k.shape[1], hkv = a.k.shape[2], dv = a.v.shape[3];
  if (d < 1) return invalid_argument("q.shape[3] (D) = " + std::to_string(d) + " must be >= 1");
  if (hq < 1 || hkv < 1) {
    return invalid_argument("head counts must be >= 1, got Hq = " + std::to_string(hq) +
                            ", Hkv = " + std::to_string(hkv));
  }
  TESSERA_RETURN_IF_ERROR(expect_dim(a.k, "k", 0, "B", b, "q.shape[0]"));
  TESSERA_RETURN_IF_ERROR(expect_dim(a.k, "k", 3, "D", d, "q.shape[3]"));
  TESSERA_RETURN_IF_ERROR(expect_dim(a.v, "v", 0, "B", b, "q.shape[0]"));
  TESSERA_RETURN_IF_ERROR(expect_dim(a.v, "v", 1, "Sk", sk, "k.shape[1]"));
  TESSERA_RETURN_IF_ERROR(expect_dim(a.v, "v", 2, "Hkv", hkv, "k.shape[2]"));
  if (hq % hkv != 0) {
    return invalid_argument("Hq % Hkv must be 0 (MHA/GQA/MQA), got Hq = q.shape[2] = " +
                            std::to_string(hq) + ", Hkv = k.shape[2] = " + std::to_string(hkv));
  }
  TESSERA_RETURN_IF_ERROR(expect_dim(a.out, "out", 0, "B", b, "q.shape[0]"));
  TESSERA_RETURN_IF_ERROR(expect_dim(a.out, "out", 1, "Sq", sq, "q.shape[1]"));
  TESSERA_RETURN_IF_ERROR(expect_dim(a.out, "out", 2, "Hq", hq, "q.shape[2]"));
  TESSERA_RETURN_IF_ERROR(expect_dim(a.out, "out", 3, "Dv", dv, "v.shape[3]"));
  if (a.varlen) TESSERA_RETURN_IF_ERROR(validate_varlen(a));
  const AttentionDims dims = dims_of(a);
  if (a.lse.present()) {
    TESSERA_RETURN_IF_ERROR(check_tensor(a.lse, "lse", 3, false));
    if (a.lse.dtype != DType::kF32) {
      return invalid_argument("lse.dtype = " + std::string(dtype_name(a.lse.dtype)) +
                              " must be f32");
    }
    TESSERA_RETURN_IF_ERROR(expect_dim(a.lse, "lse", 0, "B", b, "q.shape[0]"));
    TESSERA_RETURN_IF_ERROR(expect_dim(a.lse, "lse", 1, "Hq", hq, "q.shape[2]"));
    TESSERA_RETURN_IF_ERROR(expect_dim(a.lse, "lse", 2, "Sq", sq, "q.shape[1]"));
  }
  if (a.bias.present()) {
    TESSERA_RETURN_IF_ERROR(check_tensor(a.bias, "bias", 4, true));
    if (a.bias.dtype != DType::kF32) {
      return invalid_argument("bias.dtype = " + std::string(dtype_name(a.bias.dtype)) +
                              " must be f32");
    }
    const int64_t full[4] = {dims.batch, hq, dims.sq, dims.sk};
    const char* names[4] = {"B", "Hq", "Sq", "Sk"};
    for (int i = 0; i < 4; ++i) {
      if (a.bias.shape[i] != 1 && a.bias.shape[i] != full[i]) {
        return invalid_argument("bias.shape[" + std::to_string(i) +
                                "] = " + std::to_string(a.bias.shape[i]) + " must be 1 or " +
                                names[i] + " = " + std::to_string(full[i]) +
                                " (broadcastable to [B, Hq, Sq, Sk])");
      }
    }
  }
  if (a.scale && !std::isfinite(*a.scale)) {
    return invalid_argument("scale = " + std::to_string(*a.scale) + " must be finite");
  }
  if (!(a.softcap >= 0.0f) || !std::isfinite(a.softcap)) {
    return invalid_argument("softcap = " + std::to_string(a.softcap) +
                            " must be finite and >= 0 (0 disables it)");
  }
  if (a.mask.kind == MaskKind::kWindow && (a.mask.window_left < -1 || a.mask.window_right < -1)) {
    return invalid_argument("mask window (" + std::to_string(a.mask.window_left) + ", " +
                            std::to_string(a.mask.window_right) +
                            ") must use sizes >= 0, or -1 for unbounded");
  }
  return Status::Ok();
}

AttentionDims dims_of(const AttentionArgs& a) {
  AttentionDims dims;
  dims.hq = a.q.shape[2];
  dims.hkv = a.k.shape[2];
  dims.d = a.q.shape[3];
  dims.dv = a.v.shape[3];
  dims.total_q = a.q.shape[1];
  dims.total_k = a.k.shape[1];
  if (!a.varlen) {
    dims.batch = a.q.shape[0];
    dims.sq = a.q.shape[1];
    dims.sk = a.k.shape[1];
    return dims;
  }
  dims.batch = a.varlen->batch;
  for (int64_t b = 0; b < dims.batch; ++b) {
    dims.sq = std::max<int64_t>(dims.sq, a.varlen->cu_seqlens_q[b + 1] - a.varlen->cu_seqlens_q[b]);
    dims.sk = std::max<int64_t>(dims.sk, a.varlen->cu_seqlens_k[b + 1] - a.varlen->cu_seqlens_k[b]);
  }
  return dims;
}

SeqRange seq_range(const AttentionArgs& a, int64_t b) {
  if (!a.varlen) return {0, a.q.shape[1], 0, a.k.shape[1]};
  const int32_t* cq = a.varlen->cu_seqlens_q;
  const int32_t* ck = a.varlen->cu_seqlens_k;
  return {cq[b], cq[b + 1] - cq[b], ck[b], ck[b + 1] - ck[b]};
}

std::string Mask::describe() const {
  switch (kind) {
    case MaskKind::kNone:
      return "none";
    case MaskKind::kCausal:
      return "causal";
    case MaskKind::kWindow:
      return "window(" + std::to_string(window_left) + "," + std::to_string(window_right) + ")";
  }
  return "?";
}

std::string describe_shape(const AttentionArgs& a) {
  const AttentionDims d = dims_of(a);
  std::ostringstream os;
  os << "B=" << d.batch << ",Sq=" << d.sq << ",Sk=" << d.sk << ",Hq=" << d.hq << ",Hkv=" << d.hkv
     << ",D=" << d.d;
  if (d.dv != d.d) os << ",Dv=" << d.dv;
  os << ",dtype=" << dtype_name(a.q.dtype) << ",mask=";
  if (a.mask.kind == MaskKind::kWindow) {
    os << "window,window=" << a.mask.window_left << ":" << a.mask.window_right;
  } else {
    os << a.mask.describe();
  }
  if (a.varlen) os << ",varlen=1";
  if (a.bias.present()) os << ",bias=1";
  if (a.softcap > 0) os << ",softcap=" << a.softcap;
  return os.str();
}

namespace {
// Number of visible (query, key) pairs of one sequence, counted per row in
// O(sq) from the mask's interval form.
double visible_pairs(const Mask& mask, int64_t sq, int64_t sk) {
  if (mask.kind == MaskKind::kNone) return static_cast<double>(sq) * static_cast<double>(sk);
  double pairs = 0;
  for (int64_t i = 0; i < sq; ++i) {
    const int64_t p = i + sk - sq;
    int64_t lo = 0, hi = sk - 1;
    if (mask.kind == MaskKind::kCausal) {
      hi = std::min(hi, p);
    } else {
      if (mask.window_left >= 0) lo = std::max(lo, p - mask.window_left);
      if (mask.window_right >= 0) hi = std::min(hi, p + mask.window_right);
    }
    if (hi >= lo) pairs += static_cast<double>(hi - lo + 1);
  }
  return pairs;
}
}  // namespace

double attention_flops(const AttentionArgs& a) {
  const AttentionDims d = dims_of(a);
  double pairs = 0;
  if (a.varlen) {
    for (int64_t b = 0; b < d.batch; ++b) {
      const SeqRange r = seq_range(a, b);
      pairs += visible_pairs(a.mask, r.q_len, r.k_len);
    }
  } else {
    pairs = visible_pairs(a.mask, d.sq, d.sk) * static_cast<double>(d.batch);
  }
  return 2.0 * pairs * static_cast<double>(d.hq) * static_cast<double>(d.d + d.dv);
}

double attention_bytes(const AttentionArgs& a) {
  const AttentionDims d = dims_of(a);
  const double e = static_cast<double>(dtype_size(a.q.dtype));
  const double rows_q = static_cast<double>(a.q.shape[0] * d.total_q);
  const double rows_k = static_cast<double>(a.k.shape[0] * d.total_k);
  double bytes = e * (rows_q * d.hq * d.d + rows_k * d.hkv * (d.d + d.dv) + rows_q * d.hq * d.dv);
  if (a.lse.present()) bytes += 4.0 * rows_q * d.hq;
  return bytes;
}

}  // namespace tessera
