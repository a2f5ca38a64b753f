#include "xla/stablehlo_program.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <vector>

namespace tessera::xla {

namespace {

using Dims = std::vector<int64_t>;

// tessera's dtype names are MLIR's element types (f32, f16, bf16).
std::string element_type(DType dtype) { return std::string(dtype_name(dtype)); }

std::string tensor(const Dims& dims, const std::string& element) {
  std::string t = "tensor<";
  for (int64_t d : dims) t += std::to_string(d) + "x";
  return t + element + ">";
}

std::string list(const Dims& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

// An f32 as its exact bit pattern, which MLIR's dense<> accepts (and which
// spells -inf without special syntax).
std::string f32_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  char text[16];
  std::snprintf(text, sizeof text, "0x%08X", bits);
  return text;
}

// Appends SSA lines "%N = ..." and returns the value names.
class Emitter {
 public:
  std::string op(const std::string& rhs) {
    std::string name = "%" + std::to_string(next_++);
    body_ += "    " + name + " = " + rhs + "\n";
    return name;
  }
  std::string splat(float value, const Dims& dims) {
    return op("stablehlo.constant dense<" + f32_bits(value) + "> : " + tensor(dims, "f32"));
  }
  std::string splat_i32(int64_t value, const Dims& dims) {
    return op("stablehlo.constant dense<" + std::to_string(value) + "> : " + tensor(dims, "i32"));
  }
  std::string binary(const char* name, const std::string& a, const std::string& b,
                     const std::string& type) {
    return op(std::string("stablehlo.") + name + " " + a + ", " + b + " : " + type);
  }
  std::string unary(const char* name, const std::string& a, const std::string& type) {
    return op(std::string("stablehlo.") + name + " " + a + " : " + type);
  }
  std::string compare(const char* direction, const std::string& a, const std::string& b,
                      const std::string& operand_type, const std::string& result_type) {
    return op(std::string("stablehlo.compare ") + direction + ", " + a + ", " + b + " : (" +
              operand_type + ", " + operand_type + ") -> " + result_type);
  }
  std::string select(const std::string& pred, const std::string& a, const std::string& b,
                     const std::string& pred_type, const std::string& type) {
    return op("stablehlo.select " + pred + ", " + a + ", " + b + " : " + pred_type + ", " + type);
  }
  std::string convert(const std::string& a, const std::string& from, const std::string& to) {
    if (from == to) return a;
    return op("stablehlo.convert " + a + " : (" + from + ") -> " + to);
  }
  std::string reshape(const std::string& a, const std::string& from, const std::string& to) {
    return op("stablehlo.reshape " + a + " : (" + from + ") -> " + to);
  }
  std::string transpose(const std::string& a, const Dims& perm, const std::string& from,
                        const std::string& to) {
    return op("stablehlo.transpose " + a + ", dims = " + list(perm) + " : (" + from + ") -> " + to);
  }
  std::string broadcast(const std::string& a, const Dims& dims, const std::string& from,
                        const std::string& to) {
    return op("stablehlo.broadcast_in_dim " + a + ", dims = " + list(dims) + " : (" + from +
              ") -> " + to);
  }
  std::string reduce(const char* combiner, const std::string& a, const std::string& init,
                     int64_t dim, const std::string& from, const std::string& to) {
    return op("stablehlo.reduce(" + a + " init: " + init + ") applies stablehlo." + combiner +
              " across dimensions = [" + std::to_string(dim) + "] : (" + from +
              ", tensor<f32>) -> " + to);
  }
  const std::string& body() const { return body_; }

 private:
  std::string body_;
  int next_ = 0;
};

}  // namespace

std::string ProgramKey::describe() const {
  std::string s = "dtype=" + element_type(dtype) + ",B=" + std::to_string(batch) +
                  ",Tq=" + std::to_string(tq) + ",Sk=" + std::to_string(sk) +
                  ",Hq=" + std::to_string(hq) + ",Hkv=" + std::to_string(hkv) +
                  ",D=" + std::to_string(d) + ",Dv=" + std::to_string(dv);
  if (has_softcap) s += ",softcap=1";
  if (has_bias) s += ",bias=1";
  return s;
}

void mask_window(const Mask& mask, int32_t* left, int32_t* right) {
  *left = *right = -1;
  if (mask.kind == MaskKind::kCausal) *right = 0;
  if (mask.kind == MaskKind::kWindow) {
    // Wider than any sequence the program can hold is the same as unbounded
    // in effect; the clamp keeps it an i32.
    constexpr int64_t kWidest = int64_t{1} << 30;
    *left = static_cast<int32_t>(std::min(mask.window_left, kWidest));
    *right = static_cast<int32_t>(std::min(mask.window_right, kWidest));
  }
}

size_t ProgramKey::tile_temp_bytes() const {
  const auto n = [](int64_t v) { return static_cast<size_t>(v); };
  const size_t scores = n(batch * hq * tq * sk) * sizeof(float);
  // Score-sized: the scores, their exponentials and the mask select that XLA
  // keeps apart (measured with PJRT_Executable_GetCompiledMemoryStats: 2.3x
  // the scores on the CPU plugin), plus the bias tile; then f32 copies of the
  // q and out tiles.
  return scores * (has_bias ? 4 : 3) + n(batch * tq * hq * (d + dv)) * sizeof(float);
}

size_t ProgramKey::temp_bytes() const {
  // f32 copies of k and v: all keys, whatever the tile.
  return tile_temp_bytes() + static_cast<size_t>(batch * sk * hkv * (d + dv)) * sizeof(float);
}

size_t ProgramKeyHash::operator()(const ProgramKey& k) const {
  return std::hash<std::string>()(k.describe());
}

std::string attention_program(const ProgramKey& key) {
  const std::string dt = element_type(key.dtype);
  const int64_t g = key.hq / key.hkv;
  const Dims q_dims = {key.batch, key.tq, key.hq, key.d};
  const Dims k_dims = {key.batch, key.sk, key.hkv, key.d};
  const Dims v_dims = {key.batch, key.sk, key.hkv, key.dv};
  const Dims bias_dims = {key.batch, key.hq, key.tq, key.sk};
  const Dims s_dims = {key.batch, key.hkv, g, key.tq, key.sk};  // scores
  const Dims r_dims = {key.batch, key.hkv, g, key.tq};          // per row
  const Dims o_dims = {key.batch, key.hkv, g, key.tq, key.dv};  // per row, Dv
  const Dims tile = {key.tq, key.sk};                           // mask
  const std::string S = tensor(s_dims, "f32"), R = tensor(r_dims, "f32");
  const std::string O = tensor(o_dims, "f32"), I = tensor(tile, "i32");
  const std::string scalar_i32 = "tensor<i32>";

  Emitter e;
  // Scores in f32: q regrouped per kv head, one batched product over D.
  const std::string qf = e.convert("%q", tensor(q_dims, dt), tensor(q_dims, "f32"));
  const Dims q5 = {key.batch, key.tq, key.hkv, g, key.d};
  const std::string qg = e.reshape(qf, tensor(q_dims, "f32"), tensor(q5, "f32"));
  const Dims qt_dims = {key.batch, key.hkv, g, key.tq, key.d};
  const std::string qt =
      e.transpose(qg, {0, 2, 3, 1, 4}, tensor(q5, "f32"), tensor(qt_dims, "f32"));
  const std::string kf = e.convert("%k", tensor(k_dims, dt), tensor(k_dims, "f32"));
  std::string s = e.op("stablehlo.dot_general " + qt + ", " + kf +
                       ", batching_dims = [0, 1] x [0, 2], contracting_dims = [4] x [3] : (" +
                       tensor(qt_dims, "f32") + ", " + tensor(k_dims, "f32") + ") -> " + S);
  const auto bcast_f32 = [&](const std::string& scalar) {
    return e.broadcast(scalar, {}, "tensor<f32>", S);
  };
  s = e.binary("multiply", s, bcast_f32("%scale"), S);
  if (key.has_softcap) {
    const std::string cap = bcast_f32("%softcap");
    s = e.binary("multiply", e.unary("tanh", e.binary("divide", s, cap, S), S), cap, S);
  }
  if (key.has_bias) {
    s = e.binary("add", s, e.reshape("%bias", tensor(bias_dims, "f32"), S), S);
  }

  // Visibility of key j to tile row r: query i = q_offset + r sits at key
  // position p = i + k_len - q_len (bottom-right alignment); padded keys
  // (j >= k_len) are never visible.
  const auto bcast = [&](const std::string& scalar) {
    return e.broadcast(scalar, {}, scalar_i32, I);
  };
  const std::string row = e.op("stablehlo.iota dim = 0 : " + I);
  const std::string col = e.op("stablehlo.iota dim = 1 : " + I);
  const std::string k_len = bcast("%k_len");
  const std::string i = e.binary("add", row, bcast("%q_offset"), I);
  const std::string p = e.binary("subtract", e.binary("add", i, k_len, I), bcast("%q_len"), I);
  const std::string B = tensor(tile, "i1");
  std::string visible = e.compare("LT", col, k_len, I, B);
  // Keys p - left .. p + right, a bound of -1 being no bound: causal is
  // (-1, 0), no mask (-1, -1).
  const std::string zero = e.splat_i32(0, tile);
  const auto bounded = [&](const char* scalar, const char* op, const char* cmp) {
    const std::string w = bcast(scalar);
    const std::string edge = e.binary(op, p, w, I);
    const std::string ok = e.compare(cmp, col, edge, I, B);
    const std::string unbounded = e.compare("LT", w, zero, I, B);
    visible = e.binary("and", visible, e.binary("or", unbounded, ok, B), B);
  };
  bounded("%left", "subtract", "GE");
  bounded("%right", "add", "LE");
  const std::string SB = tensor(s_dims, "i1");
  const float neg_inf = -std::numeric_limits<float>::infinity();
  s = e.select(e.broadcast(visible, {3, 4}, B, SB), s, e.splat(neg_inf, s_dims), SB, S);

  // Softmax with the row max; a row with no visible key has max -inf, which
  // is replaced by 0 so that its exponentials are exp(-inf) = 0, not NaN.
  const std::string m = e.reduce("maximum", s, e.splat(neg_inf, {}), 4, S, R);
  const std::string RB = tensor(r_dims, "i1");
  const std::string dead = e.compare("EQ", m, e.splat(neg_inf, r_dims), R, RB);
  const std::string m_safe = e.select(dead, e.splat(0.0f, r_dims), m, RB, R);
  const std::string x = e.unary(
      "exponential", e.binary("subtract", s, e.broadcast(m_safe, {0, 1, 2, 3}, R, S), S), S);
  const std::string l = e.reduce("add", x, e.splat(0.0f, {}), 4, S, R);

  const std::string vf = e.convert("%v", tensor(v_dims, dt), tensor(v_dims, "f32"));
  std::string o = e.op("stablehlo.dot_general " + x + ", " + vf +
                       ", batching_dims = [0, 1] x [0, 2], contracting_dims = [4] x [1] : (" + S +
                       ", " + tensor(v_dims, "f32") + ") -> " + O);
  o = e.binary("divide", o, e.broadcast(l, {0, 1, 2, 3}, R, O), O);
  // l == 0 only when nothing was visible (NaN rows keep NaN): write zeros.
  const std::string OB = tensor(o_dims, "i1");
  const std::string empty = e.compare("EQ", l, e.splat(0.0f, r_dims), R, RB);
  o = e.select(e.broadcast(empty, {0, 1, 2, 3}, RB, OB), e.splat(0.0f, o_dims), o, OB, O);
  const Dims ot_dims = {key.batch, key.tq, key.hkv, g, key.dv};
  o = e.transpose(o, {0, 3, 1, 2, 4}, O, tensor(ot_dims, "f32"));
  const Dims out_dims = {key.batch, key.tq, key.hq, key.dv};
  o = e.reshape(o, tensor(ot_dims, "f32"), tensor(out_dims, "f32"));
  o = e.convert(o, tensor(out_dims, "f32"), tensor(out_dims, dt));
  // lse = m + log(l): -inf for empty rows (0 + log 0).
  const Dims lse_dims = {key.batch, key.hq, key.tq};
  std::string lse = e.binary("add", m_safe, e.unary("log", l, R), R);
  lse = e.reshape(lse, R, tensor(lse_dims, "f32"));

  std::string text =
      "module @tessera_attention {\n  func.func public @main(%q: " + tensor(q_dims, dt) +
      ", %k: " + tensor(k_dims, dt) + ", %v: " + tensor(v_dims, dt);
  if (key.has_bias) text += ", %bias: " + tensor(bias_dims, "f32");
  text +=
      ", %q_offset: tensor<i32>, %q_len: tensor<i32>, %k_len: tensor<i32>, %left: "
      "tensor<i32>, %right: tensor<i32>, %scale: tensor<f32>, %softcap: tensor<f32>) -> (" +
      tensor(out_dims, dt) + ", " + tensor(lse_dims, "f32") + ") {\n";
  text += e.body();
  text += "    return " + o + ", " + lse + " : " + tensor(out_dims, dt) + ", " +
          tensor(lse_dims, "f32") + "\n  }\n}\n";
  return text;
}

}  // namespace tessera::xla
