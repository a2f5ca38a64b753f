// The process nvtx_test.cc watches: it opens nested spans on two threads,
// dispatches one attention call with a shadow check, and opens spans with the
// profiler disabled. It writes the spans the profiler recorded to argv[1],
// one "profiler-thread <TAB> trace name" line each, and exits 0 when every
// step worked. Any NVTX tool named by NVTX_INJECTION64_PATH sees its ranges.
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "observe_backends.h"
#include "verify/grid.h"
#include "verify/materialize.h"
#include "reference/reference_backend.h"
#include "tessera/observers.h"
#include "tessera/profiler.h"

namespace tessera {
namespace {

int run(const char* spans_path) {
  Registry registry;
  // test.served serves (priority 100); the reference checks it.
  if (!registry.add(make_reference_backend()).ok() ||
      !registry
           .add(std::make_unique<testing::DelegatingBackend>("test.served", 100, Maturity::kStable))
           .ok()) {
    return 1;
  }
  Dispatcher dispatcher(registry);
  ShadowOptions shadow;
  shadow.rate = 1;  // every call: one "attention.shadow reference" span
  dispatcher.add_observer(std::make_shared<ShadowObserver>(dispatcher, shadow));
  Context ctx;
  Profiler& profiler = ctx.profiler();
  bool ok = true;
  {
    ScopedSpan outer(profiler, "driver.outer");
    std::thread worker([&profiler] {
      ScopedSpan span(profiler, "driver.worker");
      ScopedSpan inner(profiler, "driver.worker.inner");
    });
    { ScopedSpan inner(profiler, "driver.inner"); }
    {
      ScopedSpan sibling(profiler, "driver.sibling");
      verify::OwnedCase p(verify::small_case());
      ok = ok && dispatcher.run(p.args, ctx).ok();
    }
    worker.join();
  }
  profiler.set_enabled(false);  // neither spans nor ranges from here
  {
    ScopedSpan off(profiler, "driver.disabled");
    verify::OwnedCase p(verify::small_case());
    ok = ok && dispatcher.run(p.args, ctx).ok();
  }
  profiler.set_enabled(true);

  std::ofstream out(spans_path);
  for (const Span& s : profiler.spans()) {
    out << s.thread << '\t' << span_trace_name(s.name, s.backend) << '\n';
  }
  out.close();
  return ok && out ? 0 : 1;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: nvtx_span_driver SPANS_FILE\n";
    return 2;
  }
  return tessera::run(argv[1]);
}
