// Fuzz target: the strings of the CLI that become attention problems and
// dispatch policies. First byte even: a shape list (`bench --shapes`,
// `backends --explain`), each shape explained by a dispatcher over the
// built-in backends as the CLI does. Odd: a policy (`--attention=`,
// TESSERA_ATTENTION), which must print back to an equal policy.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "scratch_dir.h"
#include "tessera/tessera.h"
#include "verify/case_text.h"
#include "verify/plain_case.h"

namespace {

struct Backends {
  tessera::Registry registry;
  tessera::Context context;
  Backends() { tessera::register_builtin_backends(registry); }
};

void fuzz_shapes(const std::string& text) {
  static Backends* backends = new Backends();  // one per process: no teardown in the loop
  std::vector<tessera::verify::AttentionCase> shapes;
  if (!tessera::verify::parse_case_list(text, &shapes).ok()) return;
  tessera::Dispatcher dispatcher(backends->registry);
  for (const auto& spec : shapes) {
    const tessera::verify::PlainCase placeholder = tessera::verify::PlainCase::placeholder(spec);
    const tessera::AttentionArgs& args = placeholder.args();
    (void)tessera::validate(args);
    (void)tessera::describe_shape(args);
    // Not attention_flops(): it counts visible pairs row by row, O(Sq), which
    // is fine beside a run of the attention but not on its own for Sq = 2^31.
    (void)dispatcher.explain(args, backends->context);
  }
}

void fuzz_policy(const std::string& text) {
  tessera::Policy policy;
  if (!tessera::parse_policy(text, &policy).ok()) return;
  tessera::Policy again;
  if (!tessera::parse_policy(policy.to_string(), &again).ok()) std::abort();
  if (again.only != policy.only || again.prefer != policy.prefer || again.deny != policy.deny ||
      again.allow_experimental != policy.allow_experimental) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(tessera::fuzz::as_text(data + 1, size - 1));
  if (data[0] % 2 == 0) {
    fuzz_shapes(text);
  } else {
    fuzz_policy(text);
  }
  return 0;
}
