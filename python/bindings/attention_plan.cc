// Planned attention calls, for tessera.scaled_dot_product_attention's hot
// path: the first call of a signature (the arrays' shapes, strides, dtypes
// and devices plus the options) imports the arrays, checks the policy and
// validates the contract's args once, keeping them without their data;
// later calls with that signature bring only data pointers. Python keys the
// plans by that signature (_attention.py), so a plan never meets arrays of
// another layout. Importing a torch tensor through DLPack costs ~3 us (its
// __dlpack__ is Python) and the keyword parsing of attention() more; this
// call takes six positional handles. The dispatcher still validates each
// call (well under a microsecond; a null pointer is refused there).
#include <nanobind/nanobind.h>

#include <string>

#include "attention_call.h"
#include "runtime_handle.h"
#include "status_errors.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tessera::python {
namespace {

struct AttentionPlan {
  AttentionArgs args;  // validated; data pointers cleared
  std::string policy;
  bool has_lse = false;
  bool has_bias = false;
};

AttentionPlan make_plan(RuntimeHandle& h, const CallArgs& c, const std::string& policy) {
  if (c.cu_q.is_valid() || c.cu_k.is_valid()) {
    throw nb::value_error("cu_seqlens: varlen calls are not planned; call Runtime.attention");
  }
  AttentionPlan p{to_args(c), policy, c.lse.is_valid(), c.bias.is_valid()};
  {
    // As attention(): the policy's names are checked before the args.
    std::lock_guard<std::mutex> lock(h.mu);
    dispatcher_for(h, policy);
  }
  throw_if_error(validate(p.args));
  for (TensorView* t : {&p.args.q, &p.args.k, &p.args.v, &p.args.out, &p.args.lse, &p.args.bias}) {
    t->data = nullptr;
  }
  return p;
}

// A data pointer: an int (a torch tensor's data_ptr()) or an array nanobind
// imports without DLPack's Python (numpy's buffer).
void* data_of(nb::handle h, const char* field) {
  if (PyLong_Check(h.ptr())) {
    void* p = PyLong_AsVoidPtr(h.ptr());
    if (p == nullptr && PyErr_Occurred()) throw nb::python_error();
    return p;
  }
  InputArray a;
  if (!nb::try_cast(h, a)) {
    throw nb::type_error((std::string(field) + ": expected a data pointer or an array, got " +
                          nb::type_name(h.type()).c_str())
                             .c_str());
  }
  return const_cast<void*>(a.data());
}

// lse and bias: present exactly when the plan has them.
void* optional_data_of(nb::handle h, bool planned, const char* field) {
  if (h.is_none() != !planned) {
    throw nb::value_error((std::string(field) + (planned ? ": the plan needs one, got None"
                                                         : ": the plan has none, got one"))
                              .c_str());
  }
  return planned ? data_of(h, field) : nullptr;
}

void run_plan(RuntimeHandle& h, const AttentionPlan& p, nb::handle q, nb::handle k, nb::handle v,
              nb::handle out, nb::handle lse, nb::handle bias) {
  AttentionArgs a = p.args;
  a.q.data = data_of(q, "query");
  a.k.data = data_of(k, "key");
  a.v.data = data_of(v, "value");
  a.out.data = data_of(out, "out");
  a.lse.data = optional_data_of(lse, p.has_lse, "lse");
  a.bias.data = optional_data_of(bias, p.has_bias, "attn_mask");
  run_unlocked(h, [&] { return dispatcher_for(h, p.policy).run(a, h.runtime->context()); });
}

}  // namespace

void bind_attention_plan(nb::module_& m, nb::class_<RuntimeHandle>& runtime) {
  nb::class_<AttentionPlan>(m, "_AttentionPlan",
                            "A validated attention call without its data (Runtime._plan).")
      .def("__repr__", [](const AttentionPlan& p) {
        return "_AttentionPlan(" + describe_shape(p.args) + ", policy='" + p.policy + "')";
      });
  def_attention_call(runtime, "_plan", &make_plan,
                     "attention()'s arguments -> an _AttentionPlan: the call checked and "
                     "validated once (ValueError as attention()), kept without its data.");
  runtime.def("_run_plan", &run_plan, "plan"_a, "q"_a, "k"_a, "v"_a, "out"_a,
              "lse"_a.none() = nb::none(), "bias"_a.none() = nb::none(),
              "Runs a plan on data of its signature: each an int data pointer or an array; "
              "the caller vouches that they have the plan's shapes, strides, dtypes and "
              "device (tessera.scaled_dot_product_attention keys its plans by them).");
}

}  // namespace tessera::python
