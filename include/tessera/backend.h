// Backend: one implementation of the attention contract. A backend is a folder
// under src/backends/ exposing one factory; the build registers each folder.
// It receives an AttentionProblem: args the dispatcher has already validated.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tessera/context.h"
#include "tessera/problem.h"

namespace tessera {

enum class Maturity : uint8_t { kStable, kExperimental };

// What a backend claims, shown by `tessera backends`. check() enforces it.
struct Capabilities {
  std::vector<DType> dtypes;
  int min_head_dim = 1;
  int max_head_dim = 1 << 20;
  bool causal = false;
  bool window = false;
  bool bias = false;
  bool varlen = false;
  bool softcap = false;
  bool lse = false;
  bool gqa = false;         // Hq != Hkv
  bool dv_differs = false;  // Dv != D
  Maturity maturity = Maturity::kStable;
};

struct Availability {
  bool available = true;
  std::string reason;  // why not, when unavailable ("no CUDA device")
};

// Where check() reports why a backend cannot run a problem. Dispatch only
// asks whether there is a reason, so the text is built only when someone
// will read it (explain, an error, a verbose trace):
//   if (d.d > kMax) why.add([&] { return "D = " + std::to_string(d.d) + " ..."; });
class Reasons {
 public:
  Reasons() = default;  // counts, keeps no text
  explicit Reasons(std::vector<std::string>* text) : text_(text) {}
  template <typename MakeText>
  void add(MakeText&& make_text) {
    ++count_;
    if (text_ != nullptr) text_->push_back(make_text());
  }
  void add(const char* text) {
    ++count_;
    if (text_ != nullptr) text_->emplace_back(text);
  }
  bool empty() const { return count_ == 0; }
  bool wants_text() const { return text_ != nullptr; }
  // True once a reason is known and no text is wanted: check() may stop.
  bool settled() const { return count_ > 0 && text_ == nullptr; }

 private:
  std::vector<std::string>* text_ = nullptr;
  int count_ = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual Device device() const = 0;
  // Fixed for the backend's lifetime (the dispatcher reads it per call).
  virtual const Capabilities& capabilities() const = 0;
  virtual Availability availability() const { return {}; }
  // Higher runs first under the `auto` policy when no tuned table says more.
  virtual int priority() const = 0;
  // Adds to `why` each reason this backend cannot run `p`. The default
  // checks capabilities(); override to add backend limits and call
  // check_capabilities() first.
  virtual void check(const AttentionProblem& p, const Context& ctx, Reasons& why) const;
  // Bytes of workspace run() takes for `p` with ctx's threads.
  virtual size_t workspace_bytes(const AttentionProblem& /*p*/, const Context& /*ctx*/) const {
    return 0;
  }
  // Which of its kernel's paths run() takes for `p` (cpu.flash: "f32",
  // "bf16dot", "amx"), named in the dispatch span; "" for one path.
  virtual std::string_view kernel_path(const AttentionProblem& /*p*/) const { return {}; }
  // Computes out (and lse). Called only with a problem check() accepted. On
  // error the dispatcher falls back to the next backend.
  virtual Status run(const AttentionProblem& p, Context& ctx) = 0;

  // check() without text: what dispatch asks.
  bool can_run(const AttentionProblem& p, const Context& ctx) const;
  // check() with every reason spelled out; empty means it can.
  std::vector<std::string> reasons(const AttentionProblem& p, const Context& ctx) const;
};

// The reasons a backend with these capabilities rejects `p` (dtype, head
// dim, masks, features, device).
void check_capabilities(const Capabilities& caps, Device device, const AttentionProblem& p,
                        Reasons& why);

// For tools and tests that hold plain args: validate, check, run. An invalid
// problem or a rejection is an error naming the reasons; out stays untouched.
Status run_args(Backend& backend, const AttentionArgs& args, Context& ctx);
// The reasons `backend` cannot run `args` ("invalid args: ..." when invalid).
std::vector<std::string> check_args(const Backend& backend, const AttentionArgs& args,
                                    const Context& ctx);

std::string_view maturity_name(Maturity m);

}  // namespace tessera
