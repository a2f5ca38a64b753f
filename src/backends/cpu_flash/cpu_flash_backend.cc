// cpu.flash backend: capabilities, the limits check() enforces, and run():
// plan (flash_params.cc), one tracked workspace, one dispatched kernel call.
#include "cpu_flash/cpu_flash_backend.h"

#include <algorithm>
#include <string>
#include <thread>

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
  Capabilities capabilities() const override {
    Capabilities c;
    c.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
    c.max_head_dim = static_cast<int>(cpu_flash::kMaxHeadDim);
    c.causal = c.window = c.bias = c.varlen = c.softcap = c.lse = c.gqa = c.dv_differs = true;
    // Stable: passes the whole conformance grid (docs/CONFORMANCE.md), also
    // under ASan/UBSan at -O3, and the golden embeddings with it forced.
    c.maturity = Maturity::kStable;
    return c;
  }
  std::vector<std::string> check(const AttentionArgs& args, const Context& ctx) const override;
  // The Context is not known here: sized for one thread per hardware thread,
  // what a default Context runs.
  size_t workspace_bytes(const AttentionArgs& args) const override {
    const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    cpu_flash::FlashParams p;
    cpu_flash::make_params(args, threads, &p);
    return cpu_flash::workspace_bytes(p, threads);
  }
  Status run(const AttentionArgs& args, Context& ctx) override;
};

std::vector<std::string> CpuFlashBackend::check(const AttentionArgs& args,
                                                const Context& ctx) const {
  std::vector<std::string> reasons = check_capabilities(capabilities(), device(), args);
  const AttentionDims d = dims_of(args);
  if (d.dv > cpu_flash::kMaxHeadDim) {
    reasons.push_back("value head dim Dv = " + std::to_string(d.dv) + " above the maximum " +
                      std::to_string(cpu_flash::kMaxHeadDim) +
                      " (tiles are sized so the working set fits L2)");
  }
  if (d.sk >= cpu_flash::kMaxKeys) {
    reasons.push_back("Sk = " + std::to_string(d.sk) + " keys per sequence; at most " +
                      std::to_string(cpu_flash::kMaxKeys - 1) +
                      " (key indices are compared as f32)");
  }
  if (reasons.empty() && ctx.allocator().budget()) {
    const size_t need = workspace_bytes(args);
    const size_t budget = *ctx.allocator().budget();
    if (need > budget) {
      reasons.push_back("workspace " + std::to_string(need) + " bytes exceeds the memory budget " +
                        std::to_string(budget) + " bytes");
    }
  }
  return reasons;
}

Status CpuFlashBackend::run(const AttentionArgs& args, Context& ctx) {
  TESSERA_RETURN_IF_ERROR(validate(args));
  if (const auto reasons = check(args, ctx); !reasons.empty()) {
    return unsupported("cpu.flash cannot run " + describe_shape(args) + ": " + reasons.front());
  }
  ThreadPool& pool = ctx.pool();
  cpu_flash::FlashParams p;
  cpu_flash::make_params(args, pool.num_threads(), &p);
  Buffer workspace;
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(
      ctx.allocator(), cpu_flash::workspace_bytes(p, pool.num_threads()), kOwner, &workspace));
  cpu_flash::flash_forward(p, pool, workspace.as<float>());
  return Status::Ok();
}

}  // namespace

std::unique_ptr<Backend> make_cpu_flash_backend() { return std::make_unique<CpuFlashBackend>(); }

}  // namespace tessera
