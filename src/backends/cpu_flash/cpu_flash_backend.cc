// cpu.flash backend: capabilities, the limits check() enforces, and run():
// plan (flash_params.cc), one tracked workspace, one dispatched kernel call.
#include "cpu_flash/cpu_flash_backend.h"

#include <algorithm>
#include <string>

#include "cpu_flash/flash_forward.h"
#include "cpu_flash/flash_params.h"

namespace tessera {

namespace {

constexpr std::string_view kOwner = "cpu.flash";

class CpuFlashBackend final : public Backend {
 public:
  std::string_view name() const override { return kOwner; }
  Device device() const override { return Device::cpu(); }
  // Above cpu.gemm (50) and reference (0): the default CPU path.
  int priority() const override { return 100; }
  const Capabilities& capabilities() const override {
    static const Capabilities caps = [] {
      Capabilities c;
      c.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
      c.max_head_dim = static_cast<int>(cpu_flash::kMaxHeadDim);
      c.causal = c.window = c.bias = c.varlen = c.softcap = c.lse = c.gqa = c.dv_differs = true;
      // Stable: passes the whole conformance grid (docs/CONFORMANCE.md), also
      // under ASan/UBSan at -O3, and the golden embeddings with it forced.
      c.maturity = Maturity::kStable;
      return c;
    }();
    return caps;
  }
  void check(const AttentionProblem& p, const Context& ctx, Reasons& why) const override;
  // Sized for ctx's pool: one slice per thread.
  size_t workspace_bytes(const AttentionProblem& problem, const Context& ctx) const override {
    const int threads = ctx.pool().num_threads();
    cpu_flash::FlashParams p;
    cpu_flash::make_params(problem.args(), threads, &p);
    return cpu_flash::workspace_bytes(p, threads);
  }
  Status run(const AttentionProblem& p, Context& ctx) override;
};

void CpuFlashBackend::check(const AttentionProblem& p, const Context& ctx, Reasons& why) const {
  check_capabilities(capabilities(), device(), p, why);
  const AttentionDims& d = p.dims();
  if (d.dv > cpu_flash::kMaxHeadDim) {
    why.add([&] {
      return "value head dim Dv = " + std::to_string(d.dv) + " above the maximum " +
             std::to_string(cpu_flash::kMaxHeadDim) +
             " (tiles are sized so the working set fits L2)";
    });
  }
  if (d.sk >= cpu_flash::kMaxKeys) {
    why.add([&] {
      return "Sk = " + std::to_string(d.sk) + " keys per sequence; at most " +
             std::to_string(cpu_flash::kMaxKeys - 1) + " (key indices are compared as f32)";
    });
  }
  if (why.empty() && ctx.allocator().budget()) {
    const size_t need = workspace_bytes(p, ctx);
    const size_t budget = *ctx.allocator().budget();
    if (need > budget) {
      why.add([&] {
        return "workspace " + std::to_string(need) + " bytes exceeds the memory budget " +
               std::to_string(budget) + " bytes";
      });
    }
  }
}

Status CpuFlashBackend::run(const AttentionProblem& problem, Context& ctx) {
  // The kernel's own limits (Dv, Sk) guard memory safety: kept even though
  // the dispatcher checked, for callers that run a backend directly. No
  // text unless it refuses.
  if (!can_run(problem, ctx)) {
    return unsupported("cpu.flash cannot run " + describe_shape(problem.args()) + ": " +
                       reasons(problem, ctx).front());
  }
  ThreadPool& pool = ctx.pool();
  cpu_flash::FlashParams p;
  cpu_flash::make_params(problem.args(), pool.num_threads(), &p);
  Buffer workspace;
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(
      ctx.allocator(), cpu_flash::workspace_bytes(p, pool.num_threads()), kOwner, &workspace));
  cpu_flash::flash_forward(p, pool, workspace.as<float>());
  return Status::Ok();
}

}  // namespace

std::unique_ptr<Backend> make_cpu_flash_backend() { return std::make_unique<CpuFlashBackend>(); }

}  // namespace tessera
