// Backend: one implementation of the attention contract. A backend is a folder
// under src/backends/ exposing one factory; the build registers each folder.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tessera/attention.h"
#include "tessera/context.h"

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

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual Device device() const = 0;
  virtual Capabilities capabilities() const = 0;
  virtual Availability availability() const { return {}; }
  // Higher runs first under the `auto` policy when no tuned table says more.
  virtual int priority() const = 0;
  // Reasons this backend cannot run these (valid) args; empty means it can.
  // The default checks capabilities(); override to add backend limits and
  // call check_capabilities() first.
  virtual std::vector<std::string> check(const AttentionArgs& args, const Context& ctx) const;
  virtual size_t workspace_bytes(const AttentionArgs& /*args*/) const { return 0; }
  // Computes args.out (and lse). Called only with valid args that check()
  // accepted. On error the dispatcher falls back to the next backend.
  virtual Status run(const AttentionArgs& args, Context& ctx) = 0;
};

// The reasons a backend with these capabilities rejects args (dtype, head dim,
// masks, features, device).
std::vector<std::string> check_capabilities(const Capabilities& caps, Device device,
                                            const AttentionArgs& args);

std::string_view maturity_name(Maturity m);

}  // namespace tessera
