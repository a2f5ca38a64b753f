// tessera attention run --q q.npy --k k.npy --v v.npy --out o.npy [...]
// Runs one attention on user tensors so anyone can reproduce a case outside
// C++ (and replay a shadow-mode mismatch).
#include <cstdio>
#include <cstring>
#include <optional>

#include "commands.h"
#include "npy.h"
#include "runtime/size_limits.h"

namespace tessera::cli {

namespace {

struct RunOptions {
  std::string q, k, v, out, lse;
  std::string mask = "none";
  std::vector<int64_t> window;
  std::optional<float> scale;
  float softcap = 0;
  std::string backend;
  bool bf16 = false;
};

// Loads an .npy of rank 4 [B, S, H, D] (or rank 3 [S, H, D], B = 1) into a
// tracked buffer and describes it as a contiguous view.
Status load_tensor(const std::string& path, const char* field, bool bf16, TrackingAllocator& alloc,
                   Buffer* buf, TensorView* view, std::string* descr, bool* batched) {
  NpyArray a;
  TESSERA_RETURN_IF_ERROR(read_npy(path, &a));
  DType dtype;
  if (a.descr == "<f4") {
    dtype = DType::kF32;
  } else if (a.descr == "<f2") {
    dtype = DType::kF16;
  } else if (bf16) {
    dtype = DType::kBF16;
  } else {
    return invalid_argument(std::string(field) + " (" + path +
                            "): uint16 data is read as bf16 bits only with --bf16");
  }
  *batched = a.shape.size() == 4;
  if (a.shape.size() == 3) a.shape.insert(a.shape.begin(), 1);
  if (a.shape.size() != 4) {
    return invalid_argument(std::string(field) + " (" + path + "): rank " +
                            std::to_string(a.shape.size()) +
                            "; expected [B, S, H, D] or [S, H, D]");
  }
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(alloc, a.bytes.size(), "cli.attention_run", buf));
  // An empty array has no buffer (null data): memcpy's arguments must not be
  // null even for 0 bytes (UBSan, scripts/sanitize.sh).
  if (!a.bytes.empty()) std::memcpy(buf->data(), a.bytes.data(), a.bytes.size());
  *view =
      TensorView::contiguous(buf->data(), dtype, {a.shape[0], a.shape[1], a.shape[2], a.shape[3]});
  *descr = a.descr;
  return Status::Ok();
}

int run_attention(AppState& state, const RunOptions& o) {
  Context& ctx = state.context();
  Buffer q, k, v, out, lse;
  AttentionArgs args;
  std::string descr;
  bool batched = true;  // outputs keep the rank of q: [B,S,H,D] or [S,H,D]
  for (auto [path, field, buf, view] :
       {std::tuple{&o.q, "--q", &q, &args.q}, std::tuple{&o.k, "--k", &k, &args.k},
        std::tuple{&o.v, "--v", &v, &args.v}}) {
    if (Status s = load_tensor(*path, field, o.bf16, ctx.allocator(), buf, view, &descr, &batched);
        !s.ok()) {
      return fail(s);
    }
  }
  const int64_t b = args.q.shape[0], sq = args.q.shape[1], hq = args.q.shape[2];
  const int64_t dv = args.v.shape[3];
  // q and v are each within their files' sizes, but out takes B, Sq, Hq from q
  // and Dv from v: a q with D = 0 holds no data whatever its other dims.
  const int64_t out_numel =
      checked_product({b, sq, hq, dv, static_cast<int64_t>(dtype_size(args.q.dtype))});
  const int64_t lse_numel =
      o.lse.empty() ? 0 : checked_product({b, hq, sq, int64_t{sizeof(float)}});
  if (out_numel < 0 || lse_numel < 0) {
    return fail(invalid_argument("out [" + std::to_string(b) + ", " + std::to_string(sq) + ", " +
                                 std::to_string(hq) + ", " + std::to_string(dv) +
                                 "] (B, Sq, Hq from --q, Dv from --v) has more than 2^63 bytes"));
  }
  if (Status s =
          check_host_bytes(static_cast<uint64_t>(out_numel) + static_cast<uint64_t>(lse_numel),
                           "the outputs of attention run");
      !s.ok()) {
    return fail(s);
  }
  const size_t out_bytes = static_cast<size_t>(out_numel);
  if (Status s = Buffer::allocate(ctx.allocator(), out_bytes, "cli.attention_run", &out); !s.ok()) {
    return fail(s);
  }
  args.out = TensorView::contiguous(out.data(), args.q.dtype, {b, sq, hq, dv});
  if (!o.lse.empty()) {
    const size_t lse_bytes = static_cast<size_t>(lse_numel);
    if (Status s = Buffer::allocate(ctx.allocator(), lse_bytes, "cli.attention_run", &lse);
        !s.ok()) {
      return fail(s);
    }
    args.lse = TensorView::contiguous(lse.data(), DType::kF32, {b, hq, sq});
  }
  if (o.mask == "causal") {
    args.mask = Mask::causal();
  } else if (o.mask != "none") {
    return fail(
        invalid_argument("--mask = '" + o.mask + "': expected none or causal (or use --window)"));
  }
  if (!o.window.empty()) {
    if (o.window.size() != 2) return fail(invalid_argument("--window takes LEFT,RIGHT"));
    // Positions are computed as i + Sk - Sq -/+ a side; a bound keeps that in int64.
    for (int64_t side : o.window) {
      if (side < -1 || side > INT32_MAX) {
        return fail(invalid_argument("--window side " + std::to_string(side) +
                                     " must be -1 (unbounded) or in [0, " +
                                     std::to_string(INT32_MAX) + "]"));
      }
    }
    args.mask = Mask::window(o.window[0], o.window[1]);
  }
  args.scale = o.scale;
  args.softcap = o.softcap;
  Dispatcher* dispatcher = &state.dispatcher();
  std::unique_ptr<Dispatcher> forced;
  if (!o.backend.empty()) {
    Policy only;
    only.only = {o.backend};
    forced = std::make_unique<Dispatcher>(state.registry(), only);
    dispatcher = forced.get();
  }
  std::string used;
  if (Status s = dispatcher->run(args, ctx, &used); !s.ok()) return fail(s, 1);
  NpyArray result{descr, {b, sq, hq, dv}, {}};
  if (!batched) result.shape.erase(result.shape.begin());
  result.bytes.assign(out.as<uint8_t>(), out.as<uint8_t>() + out_bytes);
  if (Status s = write_npy(o.out, result); !s.ok()) return fail(s);
  if (!o.lse.empty()) {
    NpyArray l{"<f4", {b, hq, sq}, {}};
    if (!batched) l.shape.erase(l.shape.begin());
    l.bytes.assign(lse.as<uint8_t>(), lse.as<uint8_t>() + lse.bytes());
    if (Status s = write_npy(o.lse, l); !s.ok()) return fail(s);
  }
  std::fprintf(stderr, "attention: %s ran %s\n", used.c_str(), describe_shape(args).c_str());
  return 0;
}

}  // namespace

void add_attention_command(CLI::App& app, AppState& state) {
  auto* attention = app.add_subcommand("attention", "Run attention on user tensors");
  attention->require_subcommand(1);
  auto* run = attention->add_subcommand(
      "run",
      "Run one attention on .npy tensors: q [B,Sq,Hq,D], k [B,Sk,Hkv,D], v [B,Sk,Hkv,Dv]\n"
      "(or without B). float32 / float16, or uint16 holding bf16 bits with --bf16.\n"
      "Writes out [B,Sq,Hq,Dv] in the input dtype and, with --lse, lse [B,Hq,Sq] float32.");
  static RunOptions o;
  run->add_option("--q", o.q, "Query tensor (.npy)")->required();
  run->add_option("--k", o.k, "Key tensor (.npy)")->required();
  run->add_option("--v", o.v, "Value tensor (.npy)")->required();
  run->add_option("--out", o.out, "Output file (.npy)")->required();
  run->add_option("--lse", o.lse, "Also write the log-sum-exp (.npy)");
  run->add_option("--mask", o.mask, "none or causal (bottom-right aligned)")->capture_default_str();
  run->add_option("--window", o.window, "Sliding window LEFT,RIGHT (-1 = unbounded)")
      ->delimiter(',')
      ->expected(2);
  run->add_option("--scale", o.scale, "Score scale (default 1/sqrt(D))");
  run->add_option("--softcap", o.softcap, "tanh soft-capping of scores (0 = off)");
  run->add_option("--backend", o.backend, "Force one backend (default: the --attention policy)");
  run->add_flag("--bf16", o.bf16, "Read uint16 inputs as bf16 bits");
  run->callback([&state] {
    if (Status s = state.init(); !s.ok()) {
      exit_code = fail(s);
      return;
    }
    exit_code = run_attention(state, o);
  });
}

}  // namespace tessera::cli
