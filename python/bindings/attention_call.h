// One attention call's arguments as Python passes them, and what turns them
// into the contract's AttentionArgs and picks the dispatcher: shared by
// Runtime.attention / explain (runtime_bindings.cc) and the planned calls of
// tessera.scaled_dot_product_attention (attention_plan.cc).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "runtime_handle.h"
#include "tensor_bridge.h"
#include "tessera/attention.h"

namespace tessera::python {

using SeqLens = nanobind::ndarray<nanobind::ro, int32_t, nanobind::ndim<1>, nanobind::c_contig,
                                  nanobind::device::cpu>;

// The arguments of one attention call, as Python passes them.
struct CallArgs {
  InputArray q, k, v;
  OutputArray out, lse;
  InputArray bias;
  std::optional<float> scale;
  std::string mask;
  int64_t window_left, window_right;
  float softcap;
  SeqLens cu_q, cu_k;
  bool uint16_is_bf16;
};

// The contract's args over the arrays (no copies); a ValueError names a bad
// dtype, device, rank, mask kind or cu_seqlens pair. Not validated yet.
AttentionArgs to_args(const CallArgs& c);

// The dispatcher a call uses: the Runtime's own, or one for a per-call
// policy (made on first use; an unknown backend name is a ValueError).
// Call with h.mu held.
Dispatcher& dispatcher_for(RuntimeHandle& h, const std::string& policy_text);

// parse_policy checks the form; this checks each name is a backend of the
// build, so a typo is a ValueError rather than "nothing eligible".
Policy checked_policy(const Registry& registry, const std::string& text);

// Defines `name` on Runtime with attention()'s keyword arguments (q, k, v,
// out, lse, bias, scale, mask, window_left, window_right, softcap,
// cu_seqlens_q, cu_seqlens_k, uint16_is_bf16, policy), calling fn.
template <typename Result>
void def_attention_call(nanobind::class_<RuntimeHandle>& cls, const char* name,
                        Result (*fn)(RuntimeHandle&, const CallArgs&, const std::string&),
                        const char* doc) {
  namespace nb = nanobind;
  using namespace nb::literals;
  cls.def(
      name,
      [fn](RuntimeHandle& h, InputArray q, InputArray k, InputArray v, OutputArray out,
           OutputArray lse, InputArray bias, std::optional<float> scale, const std::string& mask,
           int64_t wl, int64_t wr, float softcap, SeqLens cu_q, SeqLens cu_k, bool uint16_is_bf16,
           const std::string& policy) {
        return fn(
            h, {q, k, v, out, lse, bias, scale, mask, wl, wr, softcap, cu_q, cu_k, uint16_is_bf16},
            policy);
      },
      "q"_a, "k"_a, "v"_a, "out"_a, "lse"_a.none() = nb::none(), "bias"_a.none() = nb::none(),
      "scale"_a.none() = nb::none(), "mask"_a = "none", "window_left"_a = -1, "window_right"_a = -1,
      "softcap"_a = 0.0f, "cu_seqlens_q"_a.none() = nb::none(),
      "cu_seqlens_k"_a.none() = nb::none(), "uint16_is_bf16"_a = false, "policy"_a = "", doc);
}

}  // namespace tessera::python
