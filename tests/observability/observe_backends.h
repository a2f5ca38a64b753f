// Test backends for the observability tests: one that delegates to the
// reference (a trustworthy candidate), one that is deliberately wrong, one
// that asks for workspace in two steps (budget refusals).
#pragma once

#include <memory>
#include <string>

#include "reference/reference_backend.h"
#include "tessera/backend.h"

namespace tessera::testing {

// Runs the reference, then (when `offset` != 0) adds `offset` to every
// element of a contiguous f32 out: a kernel that has silently gone wrong.
class DelegatingBackend final : public Backend {
 public:
  DelegatingBackend(std::string name, int priority, Maturity maturity, float offset = 0)
      : name_(std::move(name)),
        priority_(priority),
        maturity_(maturity),
        offset_(offset),
        inner_(make_reference_backend()),
        caps_(inner_->capabilities()) {
    caps_.maturity = maturity_;
  }
  std::string_view name() const override { return name_; }
  Device device() const override { return Device::cpu(); }
  int priority() const override { return priority_; }
  const Capabilities& capabilities() const override { return caps_; }
  Status run(const AttentionProblem& p, Context& ctx) override {
    ++runs;
    TESSERA_RETURN_IF_ERROR(inner_->run(p, ctx));
    const AttentionArgs& args = p.args();
    if (offset_ != 0) {
      float* out = static_cast<float*>(args.out.data);
      for (int64_t i = 0; i < args.out.numel(); ++i) out[i] += offset_;
    }
    return Status::Ok();
  }
  int runs = 0;

 private:
  std::string name_;
  int priority_;
  Maturity maturity_;
  float offset_;
  std::unique_ptr<Backend> inner_;
  Capabilities caps_;
};

// Takes `first` then `second` bytes of workspace (RAII), then delegates.
class GreedyBackend final : public Backend {
 public:
  GreedyBackend(size_t first, size_t second)
      : first_(first), second_(second), inner_(make_reference_backend()) {}
  std::string_view name() const override { return "test.greedy"; }
  Device device() const override { return Device::cpu(); }
  int priority() const override { return 1000; }
  const Capabilities& capabilities() const override { return inner_->capabilities(); }
  size_t workspace_bytes(const AttentionProblem&, const Context&) const override {
    return first_ + second_;
  }
  Status run(const AttentionProblem& p, Context& ctx) override {
    Buffer a, b;
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(ctx.allocator(), first_, "test.greedy", &a));
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(ctx.allocator(), second_, "test.greedy", &b));
    return inner_->run(p, ctx);
  }

 private:
  size_t first_, second_;
  std::unique_ptr<Backend> inner_;
};

}  // namespace tessera::testing
