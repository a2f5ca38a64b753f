#include "attention_call.h"

#include <memory>
#include <utility>

namespace nb = nanobind;

namespace tessera::python {
namespace {

Mask mask_of(const std::string& kind, int64_t left, int64_t right) {
  if (kind == "none") return Mask::none();
  if (kind == "causal") return Mask::causal();
  if (kind == "window") return Mask::window(left, right);
  throw nb::value_error(("mask: '" + kind + "' is not none, causal or window").c_str());
}

}  // namespace

AttentionArgs to_args(const CallArgs& c) {
  AttentionArgs a;
  a.q = input_view(c.q, "query", c.uint16_is_bf16);
  a.k = input_view(c.k, "key", c.uint16_is_bf16);
  a.v = input_view(c.v, "value", c.uint16_is_bf16);
  a.out = output_view(c.out, "out", c.uint16_is_bf16);
  if (c.lse.is_valid()) a.lse = output_view(c.lse, "lse", false);
  if (c.bias.is_valid()) a.bias = input_view(c.bias, "attn_mask", false);
  a.scale = c.scale;
  a.mask = mask_of(c.mask, c.window_left, c.window_right);
  a.softcap = c.softcap;
  if (c.cu_q.is_valid() != c.cu_k.is_valid()) {
    throw nb::value_error("cu_seqlens_q and cu_seqlens_k: give both or neither");
  }
  if (c.cu_q.is_valid()) {
    if (c.cu_q.shape(0) != c.cu_k.shape(0) || c.cu_q.shape(0) < 2) {
      throw nb::value_error(("cu_seqlens_q has " + std::to_string(c.cu_q.shape(0)) +
                             " entries and cu_seqlens_k " + std::to_string(c.cu_k.shape(0)) +
                             ": both need batch + 1 >= 2")
                                .c_str());
    }
    a.varlen = Varlen{c.cu_q.data(), c.cu_k.data(), static_cast<int64_t>(c.cu_q.shape(0)) - 1};
  }
  return a;
}

Policy checked_policy(const Registry& registry, const std::string& text) {
  Policy policy;
  Status s = parse_policy(text, &policy);
  if (!s.ok()) throw nb::value_error(("policy: " + s.message()).c_str());
  for (const auto* list : {&policy.only, &policy.prefer, &policy.deny}) {
    for (const std::string& name : *list) {
      if (registry.find(name) != nullptr) continue;
      std::string message = "policy: unknown backend '" + name + "' (this build has ";
      const size_t listed = message.size();
      for (Backend* b : registry.backends()) {
        if (message.size() > listed) message += ", ";
        message += b->name();
      }
      message += ")";
      throw nb::value_error(message.c_str());
    }
  }
  return policy;
}

Dispatcher& dispatcher_for(RuntimeHandle& h, const std::string& policy_text) {
  if (policy_text.empty()) return h.runtime->dispatcher();
  auto it = h.by_policy.find(policy_text);
  if (it == h.by_policy.end()) {
    Policy policy = checked_policy(h.runtime->registry(), policy_text);
    it = h.by_policy
             .emplace(policy_text,
                      std::make_unique<Dispatcher>(h.runtime->registry(), std::move(policy)))
             .first;
  }
  return *it->second;
}

}  // namespace tessera::python
