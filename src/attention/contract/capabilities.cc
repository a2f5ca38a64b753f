// The capability checks every backend shares: one small named check per
// constraint, each adding a reason, in the manner of PyTorch's sdp_utils.
// Reason text is built only when Reasons wants it (see backend.h).
#include <algorithm>
#include <string>

#include "tessera/backend.h"

namespace tessera {

std::string_view maturity_name(Maturity m) {
  return m == Maturity::kStable ? "stable" : "experimental";
}

void check_capabilities(const Capabilities& caps, Device device, const AttentionProblem& p,
                        Reasons& why) {
  const AttentionArgs& args = p.args();
  const AttentionDims& d = p.dims();
  if (!(p.device() == device)) {
    why.add([&] {
      return "tensors are on " + args.q.device.to_string() + ", backend runs on " +
             device.to_string();
    });
  }
  if (std::find(caps.dtypes.begin(), caps.dtypes.end(), p.dtype()) == caps.dtypes.end()) {
    why.add([&] { return "dtype " + std::string(dtype_name(p.dtype())) + " not supported"; });
  }
  if (d.d < caps.min_head_dim || d.d > caps.max_head_dim) {
    why.add([&] {
      return "head dim D = " + std::to_string(d.d) + " outside supported [" +
             std::to_string(caps.min_head_dim) + ", " + std::to_string(caps.max_head_dim) + "]";
    });
  }
  if (d.dv != d.d && !caps.dv_differs) {
    why.add([&] {
      return "Dv = " + std::to_string(d.dv) + " != D = " + std::to_string(d.d) + " not supported";
    });
  }
  if (args.mask.kind == MaskKind::kCausal && !caps.causal) why.add("causal mask not supported");
  if (args.mask.kind == MaskKind::kWindow && !caps.window) why.add("window mask not supported");
  if (args.bias.present() && !caps.bias) why.add("additive bias not supported");
  if (args.varlen && !caps.varlen) why.add("varlen (cu_seqlens) not supported");
  if (args.softcap > 0 && !caps.softcap) why.add("softcap not supported");
  if (args.lse.present() && !caps.lse) why.add("lse output not supported");
  if (d.hq != d.hkv && !caps.gqa) {
    why.add([&] {
      return "GQA/MQA (Hq = " + std::to_string(d.hq) + ", Hkv = " + std::to_string(d.hkv) +
             ") not supported";
    });
  }
}

void Backend::check(const AttentionProblem& p, const Context& /*ctx*/, Reasons& why) const {
  check_capabilities(capabilities(), device(), p, why);
}

bool Backend::can_run(const AttentionProblem& p, const Context& ctx) const {
  Reasons why;
  check(p, ctx, why);
  return why.empty();
}

std::vector<std::string> Backend::reasons(const AttentionProblem& p, const Context& ctx) const {
  std::vector<std::string> text;
  Reasons why(&text);
  check(p, ctx, why);
  return text;
}

std::vector<std::string> check_args(const Backend& backend, const AttentionArgs& args,
                                    const Context& ctx) {
  std::optional<AttentionProblem> p;
  if (Status s = AttentionProblem::make(args, &p); !s.ok()) return {"invalid args: " + s.message()};
  return backend.reasons(*p, ctx);
}

Status run_args(Backend& backend, const AttentionArgs& args, Context& ctx) {
  std::optional<AttentionProblem> p;
  TESSERA_RETURN_IF_ERROR(AttentionProblem::make(args, &p));
  if (!backend.can_run(*p, ctx)) {
    std::string text;
    for (const auto& r : backend.reasons(*p, ctx)) text += (text.empty() ? "" : "; ") + r;
    return unsupported(std::string(backend.name()) + " cannot run " + describe_shape(args) + ": " +
                       text);
  }
  return backend.run(*p, ctx);
}

}  // namespace tessera
