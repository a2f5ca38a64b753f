// Test helpers for cpu.flash (see flash_test_util.h).
#include "flash_test_util.h"

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "cpu_flash/flash_params.h"
#include "hwy/targets.h"
#include "reference/reference_backend.h"

namespace tessera::flash_test {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

const char* layout_name(Layout l) {
  return l == Layout::kBSHD ? "bshd" : l == Layout::kBHSD ? "bhsd" : "strided";
}

// |got - want| allowed: the output is rounded to its dtype after an f32
// accumulation, the reference after a float64 one, so they may differ by one
// rounding of the dtype plus the f32 accumulation error.
double tolerance(DType dtype, double want) {
  const double f32_error = 2e-5 * (1.0 + std::fabs(want));
  return dtype == DType::kF32 ? f32_error
                              : f32_error + 4.0 * dtype_unit_roundoff(dtype) * std::fabs(want);
}

}  // namespace

std::string Case::name() const {
  std::ostringstream os;
  os << "B" << batch << "_Sq" << sq << "_Sk" << sk << "_Hq" << hq << "_Hkv" << hkv << "_D" << d;
  if (dv != d) os << "_Dv" << dv;
  os << "_" << dtype_name(dtype) << "_" << mask.describe() << "_" << layout_name(layout);
  if (bias != BiasKind::kNone) os << "_bias" << static_cast<int>(bias);
  if (!seqlens_q.empty()) os << "_varlen";
  if (softcap > 0) os << "_softcap" << softcap;
  if (lse) os << "_lse";
  if (nan_q_row >= 0) os << "_nanrow" << nan_q_row;
  return os.str();
}

Problem::Tensor Problem::make(int64_t b, int64_t s, int64_t h, int64_t d, DType dtype, bool random,
                              Layout layout) {
  Tensor t;
  std::array<int64_t, 4> st{};
  int64_t elements = 0;
  switch (layout) {
    case Layout::kBSHD:
      st = {s * h * d, h * d, d, 1};
      elements = b * s * h * d;
      break;
    case Layout::kBHSD:
      st = {h * s * d, d, s * d, 1};
      elements = b * h * s * d;
      break;
    case Layout::kStrided: {
      const int64_t head = 2 * d + 1, seq = h * head + 3, batch = s * seq + 5;
      st = {batch, seq, head, 2};
      elements = b * batch;
      break;
    }
  }
  t.bytes.resize(static_cast<size_t>(elements) * dtype_size(dtype) + 64);
  t.view = TensorView::contiguous(t.bytes.data(), dtype, {b, s, h, d});
  for (int i = 0; i < 4; ++i) t.view.strides[i] = st[i];
  std::mt19937_64 rng(c_.seed * 1000 + ++streams_);
  std::normal_distribution<float> normal;
  for (int64_t i = 0; i < elements; ++i) {
    store_from_f32(t.bytes.data(), i, dtype, random ? normal(rng) : kNaN);
  }
  return t;
}

Problem::Problem(const Case& c) : c_(c) {
  const bool varlen = !c.seqlens_q.empty();
  int64_t rows_b = c.batch, sq = c.sq, sk = c.sk;
  if (varlen) {
    cu_q_ = {0};
    cu_k_ = {0};
    for (size_t i = 0; i < c.seqlens_q.size(); ++i) {
      cu_q_.push_back(cu_q_.back() + c.seqlens_q[i]);
      cu_k_.push_back(cu_k_.back() + c.seqlens_k[i]);
    }
    rows_b = 1;
    sq = cu_q_.back();
    sk = cu_k_.back();
  }
  total_q_ = rows_b * sq;
  q_ = make(rows_b, sq, c.hq, c.d, c.dtype, true, c.layout);
  k_ = make(rows_b, sk, c.hkv, c.d, c.dtype, true, c.layout);
  v_ = make(rows_b, sk, c.hkv, c.dv, c.dtype, true, c.layout);
  ref_out_ = make(rows_b, sq, c.hq, c.dv, c.dtype, false, c.layout);
  out_ = make(rows_b, sq, c.hq, c.dv, c.dtype, false, c.layout);
  if (c.nan_q_row >= 0) {
    const int64_t b = c.nan_q_row / sq, i = c.nan_q_row % sq;
    for (int64_t d = 0; d < c.d; ++d) {
      store_from_f32(q_.view.data, q_.view.offset({b, i, 0, d}), c.dtype, kNaN);
    }
  }
  if (c.lse) {
    lse_.assign(static_cast<size_t>(total_q_ * c.hq), kNaN);
    ref_lse_ = lse_;
  }
  if (c.bias != BiasKind::kNone) {
    // Broadcast forms: shape-1 dims (per head) and stride-0 dims (per key).
    const int64_t bb = c.batch, msq = c.sq, msk = c.sk;
    const Layout flat = Layout::kBSHD;
    if (c.bias == BiasKind::kFull) {
      bias_ = make(bb, c.hq, msq, msk, DType::kF32, true, flat);
    } else if (c.bias == BiasKind::kPerHead) {
      bias_ = make(bb, c.hq, 1, msk, DType::kF32, true, flat);
    } else {
      bias_ = make(bb, 1, 1, msk, DType::kF32, true, flat);
      bias_.view.shape = {bb, c.hq, msq, msk};
      bias_.view.strides = {msk, 0, 0, 1};
      if (msk > 1) reinterpret_cast<float*>(bias_.bytes.data())[1] = -INFINITY;  // a masked key
    }
  }
}

void Problem::poison_out() {
  const TensorView& v = out_.view;
  out_ = make(v.shape[0], v.shape[1], v.shape[2], v.shape[3], c_.dtype, false, c_.layout);
  lse_.assign(lse_.size(), kNaN);
}

AttentionArgs Problem::args(bool reference_out) const {
  AttentionArgs a;
  a.q = q_.view;
  a.k = k_.view;
  a.v = v_.view;
  a.out = reference_out ? ref_out_.view : out_.view;
  if (c_.lse) {
    const std::vector<float>& l = reference_out ? ref_lse_ : lse_;
    const int64_t rows_b = cu_q_.empty() ? c_.batch : 1;
    a.lse = TensorView::contiguous(const_cast<float*>(l.data()), DType::kF32,
                                   {rows_b, c_.hq, total_q_ / rows_b});
  }
  if (c_.bias != BiasKind::kNone) a.bias = bias_.view;
  if (!cu_q_.empty()) {
    a.varlen = Varlen{cu_q_.data(), cu_k_.data(), static_cast<int64_t>(c_.seqlens_q.size())};
  }
  a.mask = c_.mask;
  a.softcap = c_.softcap;
  a.scale = c_.scale;
  return a;
}

std::vector<float> Problem::out(bool reference_out) const {
  return values_of(reference_out ? ref_out_.view : out_.view);
}

std::vector<float> Problem::abs_v_weighted_out() {
  Tensor abs_v = v_;
  abs_v.view.data = abs_v.bytes.data();
  const size_t elements = abs_v.bytes.size() / dtype_size(c_.dtype);
  for (size_t i = 0; i < elements; ++i) {
    const float x = load_as_f32(abs_v.bytes.data(), static_cast<int64_t>(i), c_.dtype);
    store_from_f32(abs_v.bytes.data(), static_cast<int64_t>(i), c_.dtype, std::fabs(x));
  }
  const TensorView& o = ref_out_.view;
  Tensor out = make(o.shape[0], o.shape[1], o.shape[2], o.shape[3], c_.dtype, false, c_.layout);
  AttentionArgs a = args(true);
  a.v = abs_v.view;
  a.out = out.view;
  a.lse = TensorView{};
  Context ctx(ContextOptions{1});
  if (!run_args(*make_reference_backend(), a, ctx).ok()) return {};
  return values_of(out.view);
}

std::vector<float> Problem::values_of(const TensorView& v) {
  std::vector<float> values;
  for (int64_t b = 0; b < v.shape[0]; ++b) {
    for (int64_t i = 0; i < v.shape[1]; ++i) {
      for (int64_t h = 0; h < v.shape[2]; ++h) {
        for (int64_t d = 0; d < v.shape[3]; ++d) {
          values.push_back(load_as_f32(v.data, v.offset({b, i, h, d}), v.dtype));
        }
      }
    }
  }
  return values;
}

std::vector<float> Problem::lse(bool reference_out) const {
  return reference_out ? ref_lse_ : lse_;
}

namespace {

// "" or the worst element of one field. p_rounding (optional, per element:
// sum_j p_j |v_j|) widens the bound by u * p_rounding[i] for a kernel that
// rounds the probabilities to the input dtype (|p - rnd(p)| <= u p).
std::string compare(const char* field, const std::vector<float>& got,
                    const std::vector<float>& want, DType dtype,
                    const std::vector<float>* p_rounding = nullptr) {
  double worst = 0;
  size_t worst_i = 0;
  bool bad = false;
  for (size_t i = 0; i < want.size(); ++i) {
    const double w = want[i], g = got[i];
    double excess;
    if (std::isnan(w) || std::isinf(w)) {
      excess = (std::isnan(w) ? std::isnan(g) : g == w) ? 0.0 : INFINITY;
    } else {
      double bound = tolerance(dtype, w);
      if (p_rounding != nullptr) bound += dtype_unit_roundoff(dtype) * (*p_rounding)[i];
      excess = std::isfinite(g) ? std::fabs(g - w) / bound : INFINITY;
    }
    if (excess > 1.0 && (!bad || excess > worst)) {
      bad = true;
      worst = excess;
      worst_i = i;
    }
  }
  if (!bad) return "";
  std::ostringstream os;
  os << field << "[" << worst_i << "] = " << got[worst_i] << ", reference " << want[worst_i] << " ("
     << worst << "x the tolerance)";
  return os.str();
}

}  // namespace

std::string compare_on_all_targets(Backend& backend, const Case& c, int threads) {
  Problem problem(c);
  Context ref_ctx(ContextOptions{threads});
  const Status ref_status = run_args(*make_reference_backend(), problem.args(true), ref_ctx);
  if (!ref_status.ok()) return "reference failed: " + ref_status.to_string();
  const std::vector<float> want = problem.out(true), want_lse = problem.lse(true);
  // On a CPU with AMX or the bf16 dot product, bf16 cases run the AVX-512
  // targets once per bf16 path there is (P rounded to bf16, so their error
  // bound has the p-rounding term) and once with both switched off (the f32
  // products); the other targets run once.
  struct Path {
    const char* name;
    bool amx, dot;
  };
  std::vector<Path> paths;
  if (c.dtype == DType::kBF16 && c.d % cpu_flash::kAmxDvStep == 0 && cpu_flash::cpu_has_amx()) {
    paths.push_back({" (amx)", true, false});
  }
  if (c.dtype == DType::kBF16 && c.d % 2 == 0 && cpu_flash::cpu_has_bf16_dot()) {
    paths.push_back({" (bf16 dot)", false, true});
  }
  const bool bf16_paths = !paths.empty();
  paths.push_back({bf16_paths ? " (bf16 paths off)" : "", false, false});
  const std::vector<float> p_rounding =
      bf16_paths ? problem.abs_v_weighted_out() : std::vector<float>{};
  if (bf16_paths && p_rounding.size() != want.size()) return "reference failed on |V|";
  const bool dot_allowed = cpu_flash::bf16_dot_allowed(), amx_allowed = cpu_flash::amx_allowed();
  std::string failures;
  for (size_t i = 0; i < paths.size(); ++i) {
    const Path& path = paths[i];
    cpu_flash::set_amx_allowed(path.amx);
    cpu_flash::set_bf16_dot_allowed(path.dot);
    for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
      const bool avx512 = target == HWY_AVX3 || target == HWY_AVX3_DL;
      // Targets without the bf16 paths run the f32 products whatever the
      // switches say: once is enough.
      if (i > 0 && !avx512) continue;
      hwy::SetSupportedTargetsForTest(target);
      const bool rounds_p = avx512 && (path.amx || path.dot);
      std::string why;
      problem.poison_out();
      {
        Context ctx(ContextOptions{threads});
        const AttentionArgs args = problem.args(false);
        const auto reasons = check_args(backend, args, ctx);
        const Status status = run_args(backend, args, ctx);
        if (!reasons.empty()) {
          why = "rejected: " + reasons.front();
        } else if (!status.ok()) {
          why = "run failed: " + status.to_string();
        } else {
          why = compare("out", problem.out(false), want, c.dtype,
                        rounds_p ? &p_rounding : nullptr);
          if (why.empty() && c.lse) why = compare("lse", problem.lse(false), want_lse, DType::kF32);
        }
        for (const auto& leak : ctx.allocator().leaks()) why += " leak: " + leak.owner;
      }
      if (!why.empty()) {
        failures += std::string(hwy::TargetName(target)) + (avx512 ? path.name : "") + ": " +
                    why + "\n";
      }
    }
  }
  cpu_flash::set_bf16_dot_allowed(dot_allowed);
  cpu_flash::set_amx_allowed(amx_allowed);
  hwy::SetSupportedTargetsForTest(0);
  return failures;
}

}  // namespace tessera::flash_test
