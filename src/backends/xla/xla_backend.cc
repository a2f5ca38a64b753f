// The Backend around the runtime: check() says what the plan cannot do (or
// that the memory budget refuses it, with the numbers), run() executes the
// plan group by group and tile by tile.
#include "xla/xla_backend.h"

#include <algorithm>
#include <iterator>

#include "tessera/profiler.h"
#include "xla/attention_plan.h"
#include "xla/staging.h"
#include "xla/xla_runtime.h"

namespace tessera {
namespace xla {

namespace {

constexpr std::string_view kName = "xla";

PJRT_Buffer_Type pjrt_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return PJRT_Buffer_Type_F32;
    case DType::kF16:
      return PJRT_Buffer_Type_F16;
    case DType::kBF16:
      return PJRT_Buffer_Type_BF16;
  }
  return PJRT_Buffer_Type_INVALID;
}

// The program's scalar parameters, in order (stablehlo_program.h).
Status stage_scalars(const PjrtClient& client, const ProgramScalars& s,
                     std::vector<PjrtBuffer>* out) {
  const int32_t ints[] = {s.q_offset, s.q_len, s.k_len, s.left, s.right};
  const float floats[] = {s.scale, s.softcap};
  out->resize(std::size(ints) + std::size(floats));
  size_t i = 0;
  for (const int32_t& v : ints) {
    TESSERA_RETURN_IF_ERROR(client.to_device(&v, PJRT_Buffer_Type_S32, {}, &(*out)[i++]));
  }
  for (const float& v : floats) {
    TESSERA_RETURN_IF_ERROR(client.to_device(&v, PJRT_Buffer_Type_F32, {}, &(*out)[i++]));
  }
  return Status::Ok();
}

size_t workspace_of(const AttentionArgs& args) {
  size_t most = 0;
  for (const Group& g : groups_of(args)) {
    most = std::max(most, group_workspace_bytes(key_for(args, g)));
  }
  return most;
}

// One group: k and v staged once, then the query tiles.
class GroupRun {
 public:
  GroupRun(const AttentionArgs& args, const Group& group, XlaRuntime& runtime, Context& ctx)
      : args_(args), group_(group), key_(key_for(args, group)), rt_(runtime), ctx_(ctx) {}

  Status run() {
    std::shared_ptr<PjrtExecutable> exe;
    TESSERA_RETURN_IF_ERROR(rt_.executable(key_, ctx_, &exe));
    const PjrtClient& client = rt_.client();
    const int64_t nb = key_.batch, tq = key_.tq, sk = key_.sk;
    const size_t e = dtype_size(key_.dtype);
    const auto n = [](int64_t v) { return static_cast<size_t>(v); };
    const size_t q_tile = n(tq * key_.hq * key_.d) * e, out_tile = n(tq * key_.hq * key_.dv) * e;
    const size_t k_seq = n(sk * key_.hkv * key_.d) * e, v_seq = n(sk * key_.hkv * key_.dv) * e;
    const size_t bias_tile = n(key_.hq * tq * sk), lse_tile = n(key_.hq * tq);
    Buffer k, v, q, out, lse, bias;
    TESSERA_RETURN_IF_ERROR(allocate(n(nb) * k_seq, &k));
    TESSERA_RETURN_IF_ERROR(allocate(n(nb) * v_seq, &v));
    TESSERA_RETURN_IF_ERROR(allocate(n(nb) * q_tile, &q));
    TESSERA_RETURN_IF_ERROR(allocate(n(nb) * out_tile, &out));
    TESSERA_RETURN_IF_ERROR(allocate(n(nb) * lse_tile * sizeof(float), &lse));
    if (key_.has_bias) TESSERA_RETURN_IF_ERROR(allocate(n(nb) * bias_tile * sizeof(float), &bias));

    for (int64_t s = 0; s < nb; ++s) {
      const SeqRange r = seq_range(args_, group_.first + s);
      gather_rows(args_.k, batch_index(s), r.k_begin, r.k_len, sk, k.as<char>() + n(s) * k_seq);
      gather_rows(args_.v, batch_index(s), r.k_begin, r.k_len, sk, v.as<char>() + n(s) * v_seq);
    }
    PjrtBuffer dk, dv;
    TESSERA_RETURN_IF_ERROR(
        client.to_device(k.data(), pjrt_type(key_.dtype), {nb, sk, key_.hkv, key_.d}, &dk));
    TESSERA_RETURN_IF_ERROR(
        client.to_device(v.data(), pjrt_type(key_.dtype), {nb, sk, key_.hkv, key_.dv}, &dv));
    ProgramScalars scalars;
    scalars.q_len = static_cast<int32_t>(group_.q_len);
    scalars.k_len = static_cast<int32_t>(group_.k_len);
    mask_window(args_.mask, &scalars.left, &scalars.right);
    scalars.scale = args_.effective_scale();
    scalars.softcap = args_.softcap;
    for (int64_t t0 = 0; t0 < group_.q_len; t0 += tq) {
      const int64_t rows = std::min(tq, group_.q_len - t0);
      for (int64_t s = 0; s < nb; ++s) {
        const SeqRange r = seq_range(args_, group_.first + s);
        gather_rows(args_.q, batch_index(s), r.q_begin + t0, rows, tq,
                    q.as<char>() + n(s) * q_tile);
        if (key_.has_bias) {
          gather_bias(args_.bias, group_.first + s, key_.hq, t0, rows, tq, group_.k_len, sk,
                      bias.as<float>() + n(s) * bias_tile);
        }
      }
      PjrtBuffer dq, dbias;
      TESSERA_RETURN_IF_ERROR(
          client.to_device(q.data(), pjrt_type(key_.dtype), {nb, tq, key_.hq, key_.d}, &dq));
      std::vector<PJRT_Buffer*> inputs = {dq.get(), dk.get(), dv.get()};
      if (key_.has_bias) {
        TESSERA_RETURN_IF_ERROR(
            client.to_device(bias.data(), PJRT_Buffer_Type_F32, {nb, key_.hq, tq, sk}, &dbias));
        inputs.push_back(dbias.get());
      }
      scalars.q_offset = static_cast<int32_t>(t0);
      std::vector<PjrtBuffer> scalar_buffers;
      TESSERA_RETURN_IF_ERROR(stage_scalars(client, scalars, &scalar_buffers));
      for (const PjrtBuffer& b : scalar_buffers) inputs.push_back(b.get());
      std::vector<PjrtBuffer> outputs;
      {
        ScopedSpan span(ctx_.profiler(), "xla.execute");
        span.span().backend = kName;
        span.span().shape = key_.describe();
        const Status st = client.execute(*exe, inputs, &outputs);
        span.set_ok(st.ok());
        TESSERA_RETURN_IF_ERROR(st);
      }
      TESSERA_RETURN_IF_ERROR(client.to_host(outputs[0], out.data(), out.bytes()));
      TESSERA_RETURN_IF_ERROR(client.to_host(outputs[1], lse.data(), lse.bytes()));
      for (int64_t s = 0; s < nb; ++s) {
        const SeqRange r = seq_range(args_, group_.first + s);
        scatter_rows(out.as<char>() + n(s) * out_tile, args_.out, batch_index(s), r.q_begin + t0,
                     rows);
        if (args_.lse.present()) {
          scatter_lse(lse.as<float>() + n(s) * lse_tile, tq, args_.lse, batch_index(s),
                      r.q_begin + t0, rows);
        }
      }
    }
    return Status::Ok();
  }

 private:
  // Packed (varlen) tensors have batch dimension 1; rows are offset instead.
  int64_t batch_index(int64_t s) const { return args_.varlen ? 0 : group_.first + s; }
  Status allocate(size_t bytes, Buffer* out) {
    return Buffer::allocate(ctx_.allocator(), bytes, kName, out);
  }

  const AttentionArgs& args_;
  const Group group_;
  const ProgramKey key_;
  XlaRuntime& rt_;
  Context& ctx_;
};

class XlaBackend final : public Backend {
 public:
  explicit XlaBackend(std::string plugin_path) : plugin_path_(std::move(plugin_path)) {}

  std::string_view name() const override { return kName; }
  // Takes host tensors and stages them onto the plugin's device itself.
  Device device() const override { return Device::cpu(); }
  // Below cpu.gemm (50) and cpu.flash (100): on a CPU the plugin's generic
  // code is slower than the native kernels, so `auto` never prefers it.
  int priority() const override { return 10; }
  const Capabilities& capabilities() const override {
    static const Capabilities caps = [] {
      Capabilities c;
      c.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
      c.causal = c.window = c.bias = c.varlen = c.softcap = c.lse = c.gqa = c.dv_differs = true;
      c.maturity = Maturity::kExperimental;
      return c;
    }();
    return caps;
  }

  Availability availability() const override {
    const XlaRuntime& rt = XlaRuntime::for_plugin(plugin_path_);
    if (!rt.status().ok()) return {false, rt.status().message()};
    return {true, ""};
  }

  size_t workspace_bytes(const AttentionProblem& p, const Context& /*ctx*/) const override {
    return workspace_of(p.args());
  }

  void check(const AttentionProblem& p, const Context& ctx, Reasons& why) const override {
    check_capabilities(capabilities(), device(), p, why);
    if (why.settled()) return;
    const AttentionArgs& args = p.args();
    for (const Group& g : groups_of(args)) {
      if (std::string limit = tile_limit_reason(key_for(args, g)); !limit.empty()) {
        why.add([&] { return limit; });
        return;
      }
    }
    if (const std::optional<size_t> budget = ctx.allocator().budget()) {
      const size_t live = ctx.allocator().live_bytes();
      const size_t free = *budget > live ? *budget - live : 0;
      if (const size_t need = workspace_of(args); need > free) {
        why.add([&] {
          return "workspace " + std::to_string(need) +
                 " bytes (staging, device copies and f32 score tiles of at most " +
                 std::to_string(kTileTempBytes) +
                 " bytes) exceeds the memory budget: " + std::to_string(*budget) +
                 " bytes with " + std::to_string(live) + " live";
        });
      }
    }
  }

  Status run(const AttentionProblem& p, Context& ctx) override {
    const AttentionArgs& args = p.args();
    if (!(args.q.device == Device::cpu())) {
      return unsupported("xla takes host tensors, they are on " + args.q.device.to_string());
    }
    XlaRuntime& rt = XlaRuntime::for_plugin(plugin_path_);
    TESSERA_RETURN_IF_ERROR(rt.status());
    for (const Group& g : groups_of(args)) {
      if (std::string why = tile_limit_reason(key_for(args, g)); !why.empty()) {
        return resource_exhausted(why);
      }
      TESSERA_RETURN_IF_ERROR(GroupRun(args, g, rt, ctx).run());
    }
    return Status::Ok();
  }

 private:
  std::string plugin_path_;  // empty: discovered
};

}  // namespace

std::unique_ptr<Backend> make_backend_for_plugin(const std::string& plugin_path) {
  return std::make_unique<XlaBackend>(plugin_path);
}

}  // namespace xla

std::unique_ptr<Backend> make_xla_backend() { return xla::make_backend_for_plugin(""); }

}  // namespace tessera
