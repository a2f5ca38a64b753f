// A backend's own tests cover what is particular to it; here, that it keeps
// its identity and passes the quick conformance grid against the reference.
#include "toy/toy_backend.h"

#include <gtest/gtest.h>

#include "reference/reference_backend.h"
#include "tessera/context.h"
#include "verify/grid.h"
#include "verify/runner.h"

namespace tessera {
namespace {

TEST(Toy, NamesItselfAndStartsExperimental) {
  auto toy = make_toy_backend();
  EXPECT_EQ(toy->name(), "toy");
  EXPECT_EQ(toy->device(), Device::cpu());
  EXPECT_EQ(toy->capabilities().maturity, Maturity::kExperimental);
}

TEST(Toy, PassesTheQuickGrid) {
  auto toy = make_toy_backend();
  auto reference = make_reference_backend();
  for (const verify::AttentionCase& c : verify::quick_grid()) {
    Context ctx;
    const verify::CaseOutcome o = verify::run_case(*toy, *reference, c, ctx);
    EXPECT_NE(o.verdict, verify::Verdict::kFail) << c.name() << ": " << o.summary();
  }
}

}  // namespace
}  // namespace tessera
