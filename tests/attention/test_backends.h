// Test-only backends that misbehave on purpose, to prove the runtime's
// defences: fallback on failure, the allocator's leak report.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "tessera/backend.h"

namespace tessera::testing {

// Fails every run: by returning an error, by throwing, or by throwing from
// inside one job of a parallel region on the context's thread pool (a worker
// thread, not the caller, when the pool has more than one).
class FaultyBackend final : public Backend {
 public:
  enum class Mode { kReturnsError, kThrows, kThrowsInParallelJob };
  FaultyBackend(std::string name, Mode mode, int priority)
      : name_(std::move(name)), mode_(mode), priority_(priority) {}
  std::string_view name() const override { return name_; }
  Device device() const override { return Device::cpu(); }
  int priority() const override { return priority_; }
  const Capabilities& capabilities() const override { return caps_; }
  Status run(const AttentionProblem& /*p*/, Context& ctx) override {
    ++runs;
    if (mode_ == Mode::kThrows) throw std::runtime_error("kernel exploded");
    if (mode_ == Mode::kThrowsInParallelJob) {
      ctx.pool().parallel_for(64, [](int64_t item, int /*thread*/) {
        if (item == 5) throw std::runtime_error("kernel exploded in a parallel job");
      });
      return Status::Ok();  // not reached: parallel_for rethrows item 5's exception
    }
    return internal_error("simulated kernel failure");
  }
  int runs = 0;

 private:
  std::string name_;
  Mode mode_;
  int priority_;
  const Capabilities caps_{.dtypes = {DType::kF32, DType::kF16, DType::kBF16}};
};

// Delegates to another backend but forgets to free its workspace.
class LeakingBackend final : public Backend {
 public:
  explicit LeakingBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return "test.leaking"; }
  Device device() const override { return Device::cpu(); }
  int priority() const override { return 1000; }
  const Capabilities& capabilities() const override { return inner_->capabilities(); }
  Status run(const AttentionProblem& p, Context& ctx) override {
    void* scratch = nullptr;
    TESSERA_RETURN_IF_ERROR(ctx.allocator().allocate(4096, "test.leaking", &scratch));
    return inner_->run(p, ctx);  // scratch is never freed
  }

 private:
  std::unique_ptr<Backend> inner_;
};

}  // namespace tessera::testing
