#include "attention/observers/shadow.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>
#include <vector>

#include "runtime/npy_writer.h"
#include "tessera/observers.h"

namespace tessera {

Status make_scratch_run(const AttentionProblem& problem, Context& ctx, const std::string& owner,
                        ScratchRun* out) {
  const AttentionArgs& args = problem.args();
  AttentionArgs scratch = args;
  const TensorView& o = args.out;
  const size_t out_bytes =
      static_cast<size_t>(o.shape[0] * o.shape[1] * o.shape[2] * o.shape[3]) * dtype_size(o.dtype);
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(ctx.allocator(), out_bytes, owner, &out->out));
  scratch.out = TensorView::contiguous(out->out.data(), o.dtype,
                                       {o.shape[0], o.shape[1], o.shape[2], o.shape[3]}, o.device);
  if (args.lse.present()) {
    const TensorView& l = args.lse;
    const size_t lse_bytes = static_cast<size_t>(l.shape[0] * l.shape[1] * l.shape[2]) * 4;
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(ctx.allocator(), lse_bytes, owner, &out->lse));
    scratch.lse = TensorView::contiguous(out->lse.data(), DType::kF32,
                                         {l.shape[0], l.shape[1], l.shape[2]}, l.device);
  }
  // Only out and lse changed; validating again is off the dispatch path
  // (sampled shadow and canary runs only).
  return AttentionProblem::make(scratch, &out->problem);
}

Tolerance shadow_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return {1e-4, 1e-4};
    case DType::kF16:
      return {16 * dtype_unit_roundoff(DType::kF16), 16 * dtype_unit_roundoff(DType::kF16)};
    case DType::kBF16:
      return {8 * dtype_unit_roundoff(DType::kBF16), 8 * dtype_unit_roundoff(DType::kBF16)};
  }
  return {};
}

namespace {

// Visits every element of a rank-3 or rank-4 view in row-major index order.
template <typename Fn>
void for_each_index(const TensorView& t, Fn&& fn) {
  std::array<int64_t, kMaxRank> idx{};
  const int64_t n = t.numel();
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rest = flat, off = 0;
    for (int d = t.rank - 1; d >= 0; --d) {
      idx[d] = rest % t.shape[d];
      rest /= t.shape[d];
      off += idx[d] * t.strides[d];
    }
    fn(idx, off);
  }
}

std::string index_text(const char* field, const std::array<int64_t, kMaxRank>& idx, int rank) {
  std::string s = std::string(field) + "[";
  for (int d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void compare_field(const char* field, const TensorView& got, const TensorView& want, Tolerance tol,
                   Comparison* c) {
  double worst_excess = -std::numeric_limits<double>::infinity();
  for_each_index(want, [&](const std::array<int64_t, kMaxRank>& idx, int64_t want_off) {
    int64_t got_off = 0;
    for (int d = 0; d < got.rank; ++d) got_off += idx[d] * got.strides[d];
    const double g = load_as_f32(got.data, got_off, got.dtype);
    const double w = load_as_f32(want.data, want_off, want.dtype);
    ++c->elements;
    const double bound = tol.atol + tol.rtol * std::fabs(w);
    bool agree;
    double excess;
    if (std::isnan(w) || std::isnan(g) || std::isinf(w) || std::isinf(g)) {
      agree = (std::isnan(w) && std::isnan(g)) || g == w;
      excess = agree ? -bound : std::numeric_limits<double>::infinity();
    } else {
      const double err = std::fabs(g - w);
      c->max_abs_error = std::max(c->max_abs_error, err);
      agree = err <= bound;
      excess = err - bound;
    }
    if (!agree) ++c->mismatches;
    // Report the first disagreement, or the closest call when all agree.
    if ((!agree && c->ok) || (c->ok && excess > worst_excess)) {
      worst_excess = excess;
      c->worst = index_text(field, idx, want.rank) + ": got " + num(g) + " want " + num(w) +
                 " (bound " + num(bound) + ")";
    }
    if (!agree) c->ok = false;
  });
}

}  // namespace

Comparison compare_results(const AttentionArgs& got, const AttentionArgs& want) {
  Comparison c;
  const Tolerance tol = shadow_tolerance(want.out.dtype);
  compare_field("out", got.out, want.out, tol, &c);
  if (want.lse.present() && got.lse.present()) {
    // lse is a log of a sum: its error scales with |lse| + 1.
    compare_field("lse", got.lse, want.lse, {tol.atol + tol.rtol, tol.rtol}, &c);
  }
  return c;
}

bool sampled(uint64_t seed, uint64_t call, double rate) {
  if (rate >= 1.0) return true;
  if (!(rate > 0.0)) return false;
  // splitmix64 of (seed, call): a fixed, well-mixed coin per call.
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (call + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53 < rate;
}

uint64_t input_fingerprint(const AttentionArgs& args) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const TensorView* t : {&args.q, &args.k, &args.v}) {
    for_each_index(*t, [&](const std::array<int64_t, kMaxRank>&, int64_t off) {
      const float x = load_as_f32(t->data, off, t->dtype);
      uint32_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      for (int i = 0; i < 4; ++i) {
        h ^= (bits >> (8 * i)) & 0xffu;
        h *= 0x100000001b3ull;
      }
    });
  }
  return h;
}

namespace {

// A contiguous copy of `t`, through the one .npy writer (runtime/npy_writer.h).
Status write_npy(const std::string& path, const TensorView& t) {
  std::string data;
  const size_t esize = dtype_size(t.dtype);
  data.reserve(static_cast<size_t>(t.numel()) * esize);
  for_each_index(t, [&](const std::array<int64_t, kMaxRank>&, int64_t off) {
    const char* p = static_cast<const char*>(t.data) + off * static_cast<int64_t>(esize);
    data.append(p, esize);
  });
  const Status s =
      npy::write_file(path, npy::descr_of(t.dtype),
                      std::vector<int64_t>(t.shape.begin(), t.shape.begin() + t.rank), data);
  if (!s.ok()) return Status(s.code(), "shadow repro: " + s.message());
  return Status::Ok();
}

std::string run_flags(const AttentionArgs& args) {
  std::ostringstream os;
  if (args.mask.kind == MaskKind::kCausal) os << " --mask causal";
  if (args.mask.kind == MaskKind::kWindow) {
    os << " --window " << args.mask.window_left << "," << args.mask.window_right;
  }
  if (args.scale) os << " --scale " << num(*args.scale);
  if (args.softcap > 0) os << " --softcap " << num(args.softcap);
  if (args.q.dtype == DType::kBF16) os << " --bf16";
  return os.str();
}

}  // namespace

Status write_replay_case(const AttentionArgs& args, const AttentionArgs* got,
                         const AttentionArgs* want, const std::string& dir,
                         const std::string& backend, const std::string& trusted,
                         std::string* commands) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return not_found("shadow repro: cannot create '" + dir + "': " + ec.message());
  TESSERA_RETURN_IF_ERROR(write_npy(dir + "/q.npy", args.q));
  TESSERA_RETURN_IF_ERROR(write_npy(dir + "/k.npy", args.k));
  TESSERA_RETURN_IF_ERROR(write_npy(dir + "/v.npy", args.v));
  if (got != nullptr) TESSERA_RETURN_IF_ERROR(write_npy(dir + "/got.npy", got->out));
  if (want != nullptr) TESSERA_RETURN_IF_ERROR(write_npy(dir + "/want.npy", want->out));
  const std::string io = "tessera attention run --q " + dir + "/q.npy --k " + dir + "/k.npy --v " +
                         dir + "/v.npy" + run_flags(args);
  *commands = io + " --backend " + backend + " --out " + dir + "/replay_" + backend + ".npy\n" +
              io + " --backend " + trusted + " --out " + dir + "/replay_" + trusted + ".npy";
  if (args.bias.present() || args.varlen) {
    *commands += "\n(bias and varlen are not flags of `attention run`: this replay omits them)";
  }
  return Status::Ok();
}

Status parse_shadow(std::string_view text, ShadowOptions* out) {
  ShadowOptions o;
  bool first = true;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string item(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const size_t eq = item.find('=');
    const std::string key = eq == std::string::npos ? "" : item.substr(0, eq);
    const std::string value = eq == std::string::npos ? item : item.substr(eq + 1);
    const auto bad = [&](const std::string& why) {
      std::string message = "shadow option '" + item + "': ";
      message += why;
      message += " (syntax: RATE[,trusted=NAME][,quarantine=N][,seed=S][,repro=DIR])";
      return invalid_argument(message);
    };
    try {
      size_t used = 0;
      if (key.empty() && first) {
        o.rate = std::stod(value, &used);
        if (used != value.size() || !(o.rate >= 0.0 && o.rate <= 1.0)) {
          return bad("rate must be a number in [0, 1]");
        }
      } else if (key == "trusted") {
        if (value.empty()) return bad("trusted needs a backend name");
        o.trusted = value;
      } else if (key == "quarantine") {
        const long n = std::stol(value, &used);
        if (used != value.size() || n < 0) return bad("quarantine must be an integer >= 0");
        o.quarantine_after = static_cast<int>(n);
      } else if (key == "seed") {
        o.seed = std::stoull(value, &used);
        if (used != value.size()) return bad("seed must be an unsigned integer");
      } else if (key == "repro") {
        o.repro_dir = value;
      } else {
        return bad(first ? "the first item is the rate" : "unknown key '" + key + "'");
      }
    } catch (const std::exception&) {
      return bad("not a number");
    }
    first = false;
  }
  *out = std::move(o);
  return Status::Ok();
}

}  // namespace tessera
