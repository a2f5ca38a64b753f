// cpu.gemm: the Backend around head_group.cc. Threading: when there are at
// least as many head groups as pool threads, the pool runs one group per
// thread and every GEMM single-threaded (small products scale better across
// heads than inside one GEMM; see docs/DECISIONS.md); otherwise the groups
// run one after another and the library threads each GEMM.
#include "cpu_gemm/cpu_gemm_backend.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "cpu_gemm/head_group.h"
#include "runtime/gemm.h"

namespace tessera {

namespace {

constexpr std::string_view kName = "cpu.gemm";

// Head groups run at the same time, each with its own workspace slice.
int64_t groups_in_flight(int64_t units, int threads) { return units >= threads ? threads : 1; }

int64_t head_groups(const AttentionProblem& p) { return p.dims().batch * p.dims().hkv; }

class CpuGemmBackend final : public Backend {
 public:
  std::string_view name() const override { return kName; }
  Device device() const override { return Device::cpu(); }
  int priority() const override { return 50; }  // below cpu.flash (100), above reference (0)
  const Capabilities& capabilities() const override {
    static const Capabilities caps = [] {
      Capabilities c;
      c.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
      c.causal = c.window = c.bias = c.varlen = c.softcap = c.lse = c.gqa = c.dv_differs = true;
      return c;
    }();
    return caps;
  }

  // Sized for ctx's pool (see groups_in_flight).
  size_t workspace_bytes(const AttentionProblem& p, const Context& ctx) const override {
    return cpu_gemm::UnitLayout::of(p.args()).bytes() *
           static_cast<size_t>(groups_in_flight(head_groups(p), ctx.pool().num_threads()));
  }

  void check(const AttentionProblem& p, const Context& ctx, Reasons& why) const override {
    check_capabilities(capabilities(), device(), p, why);
    const std::optional<size_t> budget = ctx.allocator().budget();
    if (!why.empty() || !budget) {
      return;
    }
    const size_t live = ctx.allocator().live_bytes();
    const size_t free = *budget > live ? *budget - live : 0;
    const size_t need = workspace_bytes(p, ctx);
    if (need > free) {
      why.add([&] {
        const cpu_gemm::UnitLayout l = cpu_gemm::UnitLayout::of(p.args());
        return "workspace " + std::to_string(need) + " bytes (f32 scores " +
               std::to_string(l.rows) + " x " + std::to_string(p.dims().sk) + " per head group, " +
               std::to_string(groups_in_flight(head_groups(p), ctx.pool().num_threads())) +
               " in flight) exceeds the memory budget: " + std::to_string(*budget) +
               " bytes with " + std::to_string(live) + " live";
      });
    }
  }

  Status run(const AttentionProblem& p, Context& ctx) override;
};

Status CpuGemmBackend::run(const AttentionProblem& p, Context& ctx) {
  const AttentionArgs& args = p.args();
  const cpu_gemm::UnitLayout layout = cpu_gemm::UnitLayout::of(args);
  const AttentionDims& dims = p.dims();
  const int64_t units = head_groups(p);
  if (units == 0) {
    return Status::Ok();
  }
  const int threads = ctx.pool().num_threads();
  const int64_t in_flight = groups_in_flight(units, threads);

  // All scratch is taken before anything is written, so a refused allocation
  // leaves out untouched.
  std::vector<Buffer> buffers(static_cast<size_t>(in_flight));
  std::vector<cpu_gemm::Scratch> scratch;
  for (Buffer& buffer : buffers) {
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(ctx.allocator(), layout.bytes(), kName, &buffer));
    scratch.push_back(cpu_gemm::carve(layout, buffer.data()));
  }
  const auto unit_args = [&](int64_t unit, int64_t* b, int64_t* kv_head) {
    *b = unit / dims.hkv;
    *kv_head = unit % dims.hkv;
  };

  if (in_flight == 1) {
    const ScopedGemmThreads library_threads(threads);
    for (int64_t unit = 0; unit < units; ++unit) {
      int64_t b, kv_head;
      unit_args(unit, &b, &kv_head);
      TESSERA_RETURN_IF_ERROR(cpu_gemm::run_head_group(args, layout, b, kv_head, scratch[0]));
    }
    return Status::Ok();
  }
  std::mutex mu;
  Status first_error;
  ctx.pool().parallel_for(units, [&](int64_t unit, int thread) {
    const ScopedGemmThreads one_thread(1);
    int64_t b, kv_head;
    unit_args(unit, &b, &kv_head);
    Status st = cpu_gemm::run_head_group(args, layout, b, kv_head, scratch[thread]);
    if (!st.ok()) {
      const std::lock_guard<std::mutex> lock(mu);
      if (first_error.ok()) {
        first_error = std::move(st);
      }
    }
  });
  return first_error;
}

}  // namespace

std::unique_ptr<Backend> make_cpu_gemm_backend() { return std::make_unique<CpuGemmBackend>(); }

}  // namespace tessera
