#include "shape.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <random>

#include "runtime/bounded_text.h"
#include "size_limits.h"

#if TESSERA_HAVE_CUDA
#include "runtime/cuda/cuda_runtime.h"
#endif

namespace tessera::cli {

namespace {

// Every dimension and window side; cu_seqlens are int32, so larger sequences
// could not be described anyway.
constexpr int64_t kMaxShapeValue = INT32_MAX;
// Elements of any one tensor: strides and byte counts (x 8) stay far inside
// int64 for every backend's arithmetic.
constexpr int64_t kMaxTensorElements = int64_t{1} << 48;
// Score elements B * Hq * Sq * Sk, the product backends size their work by.
constexpr int64_t kMaxScoreElements = int64_t{1} << 56;
// Sequences of a varlen shape: its cu_seqlens arrays are built even to
// explain, and validation and every backend's check() walk them (O(B) each).
// 2^20 took over a second under the sanitizers (fuzzing); real packed batches
// hold thousands.
constexpr int64_t kMaxVarlenBatch = int64_t{1} << 16;

// Decimal digits only (std::stoll would take " +5"), at most kMaxShapeValue.
Status parse_int(const std::string& key, const std::string& value, int64_t* out) {
  int64_t n = 0;
  bool ok = !value.empty() && value.size() <= 10;
  for (char c : value) {
    if (!ok || c < '0' || c > '9') {
      ok = false;
      break;
    }
    n = n * 10 + (c - '0');
  }
  if (!ok || n > kMaxShapeValue) {
    return invalid_argument("shape key " + key + " = " + quote_bounded(value) +
                            " is not an integer in [0, " + std::to_string(kMaxShapeValue) + "]");
  }
  *out = n;
  return Status::Ok();
}

// A finite, non-negative float, the whole value (std::stof stops at "1.5abc").
Status parse_softcap(const std::string& value, float* out) {
  char* end = nullptr;
  errno = 0;
  const float f = value.empty() ? 0.0f : std::strtof(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE ||
      !std::isfinite(f) || f < 0.0f) {
    return invalid_argument("shape key softcap = " + quote_bounded(value) +
                            " is not a finite number >= 0");
  }
  *out = f;
  return Status::Ok();
}

Status parse_flag(const std::string& key, const std::string& value, bool* out) {
  if (value == "1" || value == "true") {
    *out = true;
  } else if (value == "0" || value == "false") {
    *out = false;
  } else {
    return invalid_argument("shape key " + key + " = " + quote_bounded(value) + " must be 0 or 1");
  }
  return Status::Ok();
}

// Layout of one rank-4 tensor: logical [B, S, H, D]; BHSD stores heads outside
// sequence positions.
TensorView make_view(void* data, DType dtype, int64_t b, int64_t s, int64_t h, int64_t d,
                     bool bhsd) {
  TensorView t = TensorView::contiguous(data, dtype, {b, s, h, d});
  if (bhsd) t.strides = {h * s * d, d, s * d, 1};
  return t;
}

// The products of a parsed shape, checked before anything is built from it,
// so no stride or byte count computed later can overflow.
Status check_sizes(const ShapeSpec& s) {
  const std::string shape = "shape " + quote_bounded(s.text) + ": ";
  if (s.varlen) {
    if (s.b > kMaxVarlenBatch) {
      return invalid_argument(shape + "varlen B = " + std::to_string(s.b) +
                              " sequences exceeds the limit of " + std::to_string(kMaxVarlenBatch));
    }
    if (s.b * std::max(s.sq, s.sk) > INT32_MAX) {  // each <= 2^31: no overflow
      return invalid_argument(
          shape + "varlen packs B * max(Sq, Sk) = " + std::to_string(s.b * std::max(s.sq, s.sk)) +
          " rows, more than int32 cu_seqlens can index (" + std::to_string(INT32_MAX) + ")");
    }
  }
  const int64_t rows_q = s.b * s.sq, rows_k = s.b * s.sk;  // each <= 2^62
  struct Count {
    const char* what;
    int64_t elements;  // -1: beyond int64
    int64_t limit;
  };
  const Count counts[] = {
      {"q (B*Sq*Hq*D)", checked_product({rows_q, s.hq, s.d}), kMaxTensorElements},
      {"k (B*Sk*Hkv*D)", checked_product({rows_k, s.hkv, s.d}), kMaxTensorElements},
      {"v (B*Sk*Hkv*Dv)", checked_product({rows_k, s.hkv, s.dv}), kMaxTensorElements},
      {"out (B*Sq*Hq*Dv)", checked_product({rows_q, s.hq, s.dv}), kMaxTensorElements},
      {"bias (Hq*Sq*Sk)", s.bias ? checked_product({s.hq, s.sq, s.sk}) : 0, kMaxTensorElements},
      {"scores (B*Hq*Sq*Sk)", checked_product({rows_q, s.hq, s.sk}), kMaxScoreElements},
  };
  for (const Count& c : counts) {
    if (c.elements >= 0 && c.elements <= c.limit) continue;
    return invalid_argument(shape + c.what + " has " +
                            (c.elements < 0 ? "more than 2^63" : std::to_string(c.elements)) +
                            " elements, more than the limit of " + std::to_string(c.limit));
  }
  return Status::Ok();
}

}  // namespace

Status parse_shape(const std::string& text, ShapeSpec* out) {
  ShapeSpec spec;
  spec.text = text;
  bool mask_window = false;
  int64_t left = -1, right = -1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return invalid_argument("shape item " + quote_bounded(item) + " in " + quote_bounded(text) +
                              " is not KEY=VALUE");
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    int64_t n = 0;
    if (key == "B") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.b));
    } else if (key == "S") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &n));
      spec.sq = spec.sk = n;
    } else if (key == "Sq") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.sq));
    } else if (key == "Sk") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.sk));
    } else if (key == "H") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &n));
      spec.hq = spec.hkv = n;
    } else if (key == "Hq") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.hq));
    } else if (key == "Hkv") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.hkv));
    } else if (key == "D") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.d));
    } else if (key == "Dv") {
      TESSERA_RETURN_IF_ERROR(parse_int(key, value, &spec.dv));
    } else if (key == "dtype") {
      if (!parse_dtype(value, &spec.dtype)) {
        return invalid_argument("shape key dtype = " + quote_bounded(value) +
                                ": expected f32, bf16 or f16");
      }
    } else if (key == "mask") {
      if (value == "none") {
        spec.mask = Mask::none();
      } else if (value == "causal") {
        spec.mask = Mask::causal();
      } else if (value == "window") {
        mask_window = true;
      } else {
        return invalid_argument("shape key mask = " + quote_bounded(value) +
                                ": expected none, causal or window");
      }
    } else if (key == "window") {
      const size_t colon = value.find(':');
      if (colon == std::string::npos) {
        return invalid_argument("shape key window = " + quote_bounded(value) +
                                ": expected LEFT:RIGHT");
      }
      TESSERA_RETURN_IF_ERROR(parse_int("window left", value.substr(0, colon), &left));
      TESSERA_RETURN_IF_ERROR(parse_int("window right", value.substr(colon + 1), &right));
      mask_window = true;
    } else if (key == "layout") {
      if (value != "bshd" && value != "bhsd") {
        return invalid_argument("shape key layout = " + quote_bounded(value) +
                                ": expected bshd or bhsd");
      }
      spec.bhsd = value == "bhsd";
    } else if (key == "lse") {
      TESSERA_RETURN_IF_ERROR(parse_flag(key, value, &spec.lse));
    } else if (key == "bias") {
      TESSERA_RETURN_IF_ERROR(parse_flag(key, value, &spec.bias));
    } else if (key == "varlen") {
      TESSERA_RETURN_IF_ERROR(parse_flag(key, value, &spec.varlen));
    } else if (key == "softcap") {
      TESSERA_RETURN_IF_ERROR(parse_softcap(value, &spec.softcap));
    } else {
      return invalid_argument("unknown shape key " + quote_bounded(key) + " in " +
                              quote_bounded(text) +
                              " (keys: B S Sq Sk H Hq Hkv D Dv dtype mask window layout lse "
                              "bias varlen softcap)");
    }
  }
  if (mask_window) spec.mask = Mask::window(left, right);
  if (spec.dv < 0) spec.dv = spec.d;
  if (spec.b < 1 || spec.hq < 1 || spec.hkv < 1 || spec.d < 1) {
    return invalid_argument("shape " + quote_bounded(text) + ": B, Hq, Hkv and D must be >= 1");
  }
  TESSERA_RETURN_IF_ERROR(check_sizes(spec));
  *out = spec;
  return Status::Ok();
}

Status parse_shape_list(const std::string& text, std::vector<ShapeSpec>* out) {
  out->clear();
  size_t start = 0;
  while (start <= text.size()) {
    size_t semi = text.find(';', start);
    if (semi == std::string::npos) semi = text.size();
    const std::string item = text.substr(start, semi - start);
    start = semi + 1;
    if (item.empty()) continue;
    ShapeSpec spec;
    TESSERA_RETURN_IF_ERROR(parse_shape(item, &spec));
    out->push_back(spec);
  }
  if (out->empty()) return invalid_argument("no shapes given");
  return Status::Ok();
}

namespace {

struct Layout {
  int64_t qb, kb, rows_q, rows_k;  // batch dim and rows per batch entry of the tensors
};
Layout layout_of(const ShapeSpec& s) {
  if (s.varlen) return {1, 1, s.b * s.sq, s.b * s.sk};
  return {s.b, s.b, s.sq, s.sk};
}

AttentionArgs build_args(const ShapeSpec& s, void* q, void* k, void* v, void* out, void* lse,
                         void* bias) {
  const Layout l = layout_of(s);
  AttentionArgs a;
  a.q = make_view(q, s.dtype, l.qb, l.rows_q, s.hq, s.d, s.bhsd);
  a.k = make_view(k, s.dtype, l.kb, l.rows_k, s.hkv, s.d, s.bhsd);
  a.v = make_view(v, s.dtype, l.kb, l.rows_k, s.hkv, s.dv, s.bhsd);
  a.out = make_view(out, s.dtype, l.qb, l.rows_q, s.hq, s.dv, s.bhsd);
  if (s.lse) a.lse = TensorView::contiguous(lse, DType::kF32, {l.qb, s.hq, l.rows_q});
  if (s.bias) a.bias = TensorView::contiguous(bias, DType::kF32, {1, s.hq, s.sq, s.sk});
  a.mask = s.mask;
  a.softcap = s.softcap;
  return a;
}

}  // namespace

AttentionArgs Problem::placeholder_args(const ShapeSpec& spec) {
  // validate() and check() read shapes only; any non-null address will do.
  static char placeholder;
  static std::vector<int32_t> cu_q, cu_k;
  AttentionArgs a = build_args(spec, &placeholder, &placeholder, &placeholder, &placeholder,
                               &placeholder, &placeholder);
  if (spec.varlen) {
    cu_q.assign(static_cast<size_t>(spec.b + 1), 0);
    cu_k.assign(static_cast<size_t>(spec.b + 1), 0);
    for (int64_t i = 0; i <= spec.b; ++i) {
      cu_q[i] = static_cast<int32_t>(i * spec.sq);
      cu_k[i] = static_cast<int32_t>(i * spec.sk);
    }
    a.varlen = Varlen{cu_q.data(), cu_k.data(), spec.b};
  }
  return a;
}

Status Problem::create(const ShapeSpec& s, TrackingAllocator& alloc, uint64_t seed, Problem* out) {
  const Layout l = layout_of(s);
  const size_t e = dtype_size(s.dtype);
  const auto n = [](int64_t a, int64_t b, int64_t c, int64_t d) {
    return static_cast<size_t>(a * b * c * d);
  };
  // parse_shape() bounded each of these products by 2^48 elements.
  const size_t nq = n(l.qb, l.rows_q, s.hq, s.d), nk = n(l.kb, l.rows_k, s.hkv, s.d),
               nv = n(l.kb, l.rows_k, s.hkv, s.dv), no = n(l.qb, l.rows_q, s.hq, s.dv);
  const size_t n_lse = s.lse ? static_cast<size_t>(l.qb * s.hq * l.rows_q) : 0;
  const size_t n_bias = s.bias ? static_cast<size_t>(s.hq * s.sq * s.sk) : 0;
  TESSERA_RETURN_IF_ERROR(check_host_bytes((nq + nk + nv + no) * e + (n_lse + n_bias) * 4,
                                           "the tensors of shape " + quote_bounded(s.text)));
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(alloc, nq * e, "cli.problem", &out->q_));
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(alloc, nk * e, "cli.problem", &out->k_));
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(alloc, nv * e, "cli.problem", &out->v_));
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(alloc, no * e, "cli.problem", &out->out_));
  if (s.lse) {
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(alloc, n_lse * 4, "cli.problem", &out->lse_));
  }
  if (s.bias) {
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(alloc, n_bias * 4, "cli.problem", &out->bias_));
  }
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  const auto fill = [&](Buffer& buf, size_t count, DType dtype) {
    for (size_t i = 0; i < count; ++i)
      store_from_f32(buf.data(), static_cast<int64_t>(i), dtype, normal(rng));
  };
  fill(out->q_, nq, s.dtype);
  fill(out->k_, nk, s.dtype);
  fill(out->v_, nv, s.dtype);
  if (s.bias) fill(out->bias_, n_bias, DType::kF32);
  out->args_ = build_args(s, out->q_.data(), out->k_.data(), out->v_.data(), out->out_.data(),
                          out->lse_.data(), out->bias_.data());
  if (s.varlen) {
    out->cu_q_.resize(static_cast<size_t>(s.b + 1));
    out->cu_k_.resize(static_cast<size_t>(s.b + 1));
    for (int64_t i = 0; i <= s.b; ++i) {
      out->cu_q_[i] = static_cast<int32_t>(i * s.sq);
      out->cu_k_[i] = static_cast<int32_t>(i * s.sk);
    }
    out->args_.varlen = Varlen{out->cu_q_.data(), out->cu_k_.data(), s.b};
  }
  return Status::Ok();
}

Status Problem::to_device(Context& ctx, int device) {
#if TESSERA_HAVE_CUDA
  TrackingAllocator& dev = cuda::device_allocator(ctx, device);
  void* stream = ctx.device_stream();
  const auto move = [&](Buffer& host, TensorView* view) -> Status {
    if (host.data() == nullptr) return Status::Ok();
    Buffer on_device;
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(dev, host.bytes(), "cli.problem", &on_device));
    TESSERA_RETURN_IF_ERROR(
        cuda::copy_to_device(on_device.data(), host.data(), host.bytes(), stream));
    TESSERA_RETURN_IF_ERROR(cuda::synchronize(stream));
    if (view != nullptr) {
      view->data = on_device.data();
      view->device = Device::cuda(device);
    }
    host = std::move(on_device);
    return Status::Ok();
  };
  TESSERA_RETURN_IF_ERROR(move(q_, &args_.q));
  TESSERA_RETURN_IF_ERROR(move(k_, &args_.k));
  TESSERA_RETURN_IF_ERROR(move(v_, &args_.v));
  TESSERA_RETURN_IF_ERROR(move(out_, &args_.out));
  TESSERA_RETURN_IF_ERROR(move(lse_, args_.lse.present() ? &args_.lse : nullptr));
  TESSERA_RETURN_IF_ERROR(move(bias_, args_.bias.present() ? &args_.bias : nullptr));
  return Status::Ok();
#else
  (void)ctx;
  return unavailable("this build has no CUDA support; cannot place tensors on cuda:" +
                     std::to_string(device));
#endif
}

}  // namespace tessera::cli
