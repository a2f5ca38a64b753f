// The capability checks every backend shares: one small named check per
// constraint, each adding a reason, in the manner of PyTorch's sdp_utils.
#include <algorithm>
#include <string>

#include "tessera/backend.h"

namespace tessera {

std::string_view maturity_name(Maturity m) {
  return m == Maturity::kStable ? "stable" : "experimental";
}

std::vector<std::string> check_capabilities(const Capabilities& caps, Device device,
                                            const AttentionArgs& args) {
  std::vector<std::string> reasons;
  const AttentionDims d = dims_of(args);
  if (!(args.q.device == device)) {
    reasons.push_back("tensors are on " + args.q.device.to_string() + ", backend runs on " +
                      device.to_string());
  }
  if (std::find(caps.dtypes.begin(), caps.dtypes.end(), args.q.dtype) == caps.dtypes.end()) {
    reasons.push_back("dtype " + std::string(dtype_name(args.q.dtype)) + " not supported");
  }
  if (d.d < caps.min_head_dim || d.d > caps.max_head_dim) {
    reasons.push_back("head dim D = " + std::to_string(d.d) + " outside supported [" +
                      std::to_string(caps.min_head_dim) + ", " + std::to_string(caps.max_head_dim) +
                      "]");
  }
  if (d.dv != d.d && !caps.dv_differs) {
    reasons.push_back("Dv = " + std::to_string(d.dv) + " != D = " + std::to_string(d.d) +
                      " not supported");
  }
  if (args.mask.kind == MaskKind::kCausal && !caps.causal)
    reasons.push_back("causal mask not supported");
  if (args.mask.kind == MaskKind::kWindow && !caps.window)
    reasons.push_back("window mask not supported");
  if (args.bias.present() && !caps.bias) reasons.push_back("additive bias not supported");
  if (args.varlen && !caps.varlen) reasons.push_back("varlen (cu_seqlens) not supported");
  if (args.softcap > 0 && !caps.softcap) reasons.push_back("softcap not supported");
  if (args.lse.present() && !caps.lse) reasons.push_back("lse output not supported");
  if (d.hq != d.hkv && !caps.gqa) {
    reasons.push_back("GQA/MQA (Hq = " + std::to_string(d.hq) + ", Hkv = " + std::to_string(d.hkv) +
                      ") not supported");
  }
  return reasons;
}

std::vector<std::string> Backend::check(const AttentionArgs& args, const Context& /*ctx*/) const {
  return check_capabilities(capabilities(), device(), args);
}

}  // namespace tessera
