// cpu.flash backend and its variants: capabilities, the limits check()
// enforces, and run(): plan (flash_params.cc), one tracked workspace, one
// dispatched kernel call. A variant is the same class with the product path
// forced (product_paths.h).
#include "cpu_flash/cpu_flash_backend.h"

#include <algorithm>
#include <optional>
#include <string>

#include "cpu_flash/flash_forward.h"
#include "cpu_flash/flash_params.h"
#include "cpu_flash/product_paths.h"

namespace tessera {

namespace {

using cpu_flash::Products;

constexpr std::string_view kOwner = "cpu.flash";
// Above cpu.gemm (50) and reference (0): the default CPU path.
constexpr int kPriority = 100;
// Below reference: plain `auto` never falls back into a variant of the
// kernel that just failed; an only:/prefer: policy, a tuned table or a name
// chooses a variant.
constexpr int kVariantPriority = -10;

Capabilities make_capabilities(bool bf16_only) {
  Capabilities c;
  c.dtypes = bf16_only ? std::vector<DType>{DType::kBF16}
                       : std::vector<DType>{DType::kF32, DType::kF16, DType::kBF16};
  c.max_head_dim = static_cast<int>(cpu_flash::kMaxHeadDim);
  c.causal = c.window = c.bias = c.varlen = c.softcap = c.lse = c.gqa = c.dv_differs = true;
  // Stable: passes the whole conformance grid (docs/CONFORMANCE.md), also
  // under ASan/UBSan at -O3, and the golden embeddings with it forced.
  c.maturity = Maturity::kStable;
  return c;
}

class CpuFlashBackend final : public Backend {
 public:
  // `forced`: a variant, named cpu.flash:<path>, that always runs that path.
  explicit CpuFlashBackend(std::optional<Products> forced = std::nullopt)
      : forced_(forced),
        name_(forced ? std::string(kOwner) + ":" + std::string(cpu_flash::path_name(*forced))
                     : std::string(kOwner)) {}

  std::string_view name() const override { return name_; }
  Device device() const override { return Device::cpu(); }
  int priority() const override { return forced_ ? kVariantPriority : kPriority; }
  const Capabilities& capabilities() const override {
    static const Capabilities all = make_capabilities(false);
    static const Capabilities bf16 = make_capabilities(true);
    return forced_ && *forced_ != Products::kF32 ? bf16 : all;
  }
  Availability availability() const override {
    if (!forced_ || cpu_flash::path_available(*forced_)) return {};
    return {false, cpu_flash::path_unavailable_reason(*forced_)};
  }
  void check(const AttentionProblem& p, const Context& ctx, Reasons& why) const override;
  // Sized for ctx's pool: one slice per thread.
  size_t workspace_bytes(const AttentionProblem& problem, const Context& ctx) const override {
    const int threads = ctx.pool().num_threads();
    cpu_flash::FlashParams p;
    cpu_flash::make_params(problem.args(), threads, &p, forced_);
    return cpu_flash::workspace_bytes(p, threads);
  }
  std::string_view kernel_path(const AttentionProblem& p) const override {
    return cpu_flash::path_name(forced_ ? *forced_ : cpu_flash::product_path_for(p.args()));
  }
  Status run(const AttentionProblem& p, Context& ctx) override;

 private:
  const std::optional<Products> forced_;
  const std::string name_;
};

void CpuFlashBackend::check(const AttentionProblem& p, const Context& ctx, Reasons& why) const {
  check_capabilities(capabilities(), device(), p, why);
  const AttentionDims& d = p.dims();
  if (forced_) {
    // For a caller that runs a variant directly: the dispatcher skips an
    // unavailable backend before asking.
    if (!cpu_flash::path_available(*forced_)) {
      why.add([&] { return "unavailable: " + cpu_flash::path_unavailable_reason(*forced_); });
    }
    // The dtype is capabilities()'s; the head dim rule is the path's.
    if (p.dtype() == DType::kBF16 && !cpu_flash::path_applies(*forced_, DType::kBF16, d.d)) {
      why.add([&] { return cpu_flash::path_refusal(*forced_, DType::kBF16, d.d); });
    }
  }
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
  // The kernel's own limits (Dv, Sk, a forced path's rules) guard memory
  // safety: kept even though the dispatcher checked, for callers that run a
  // backend directly. No text unless it refuses.
  if (!can_run(problem, ctx)) {
    return unsupported(name_ + " cannot run " + describe_shape(problem.args()) + ": " +
                       reasons(problem, ctx).front());
  }
  ThreadPool& pool = ctx.pool();
  cpu_flash::FlashParams p;
  cpu_flash::make_params(problem.args(), pool.num_threads(), &p, forced_);
  Buffer workspace;
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(
      ctx.allocator(), cpu_flash::workspace_bytes(p, pool.num_threads()), name_, &workspace));
  cpu_flash::flash_forward(p, pool, workspace.as<float>());
  return Status::Ok();
}

}  // namespace

std::unique_ptr<Backend> make_cpu_flash_backend() { return std::make_unique<CpuFlashBackend>(); }

std::vector<std::unique_ptr<Backend>> make_cpu_flash_variants() {
  std::vector<std::unique_ptr<Backend>> out;
  out.reserve(cpu_flash::kAllPaths.size());
  for (Products path : cpu_flash::kAllPaths) out.push_back(std::make_unique<CpuFlashBackend>(path));
  return out;
}

}  // namespace tessera
