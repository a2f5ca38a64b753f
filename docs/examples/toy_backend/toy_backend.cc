// toy: every question is answered by the reference backend it wraps. A real
// backend computes run() itself and never includes another backend; the toy
// borrows the reference only to stay short.
#include "toy/toy_backend.h"

#include "reference/reference_backend.h"

namespace tessera {

namespace {

class ToyBackend final : public Backend {
 public:
  ToyBackend() : inner_(make_reference_backend()) {}

  std::string_view name() const override { return "toy"; }
  Device device() const override { return Device::cpu(); }
  // Above the reference (0), below every real kernel: `auto` never prefers it.
  int priority() const override { return 1; }
  const Capabilities& capabilities() const override { return caps_; }
  size_t workspace_bytes(const AttentionProblem& p, const Context& ctx) const override {
    return inner_->workspace_bytes(p, ctx);
  }
  Status run(const AttentionProblem& p, Context& ctx) override { return inner_->run(p, ctx); }

 private:
  std::unique_ptr<Backend> inner_;
  // New backends start experimental: `auto` serves them only when allowed
  // (docs/DECISIONS.md, "Experimental backends need permission to serve").
  const Capabilities caps_ = [this] {
    Capabilities c = inner_->capabilities();
    c.maturity = Maturity::kExperimental;
    return c;
  }();
};

}  // namespace

std::unique_ptr<Backend> make_toy_backend() { return std::make_unique<ToyBackend>(); }

}  // namespace tessera
