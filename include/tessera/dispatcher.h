// Dispatcher: picks a backend per call by policy, explains its choice, and
// falls back to the next eligible backend when a run fails.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/backend.h"
#include "tessera/registry.h"

namespace tessera {

// Policy text (CLI --attention=, env TESSERA_ATTENTION), clauses joined by ';':
//   auto                     fastest supported by priority (the default)
//   NAME[,NAME...]           shorthand for only:NAME,...
//   only:NAME[,NAME...]      use just these, in this order
//   prefer:NAME[,NAME...]    try these first, then the rest by priority
//   deny:NAME[,NAME...]      never use these
struct Policy {
  std::vector<std::string> only;
  std::vector<std::string> prefer;
  std::vector<std::string> deny;
  std::string to_string() const;
};
Status parse_policy(std::string_view text, Policy* out);
// TESSERA_ATTENTION if set (parse errors are returned), else `fallback`.
Status policy_from_environment(const Policy& fallback, Policy* out);

struct BackendVerdict {
  std::string name;
  enum class Kind { kChosen, kEligible, kRejected } kind = Kind::kRejected;
  std::vector<std::string> reasons;  // for rejected: why; for chosen: why it
};
struct Explanation {
  Status args_status;                    // invalid args: nothing is eligible
  std::vector<BackendVerdict> verdicts;  // in the order they would be tried
  std::string chosen;                    // "" when none
};

struct DispatchStats {
  uint64_t calls = 0;
  uint64_t failures = 0;   // runs that returned an error or threw
  uint64_t fallbacks = 0;  // calls served by a later backend after a failure
};

class Dispatcher {
 public:
  explicit Dispatcher(const Registry& registry, Policy policy = {});
  void set_policy(Policy policy);
  const Policy& policy() const { return policy_; }

  Explanation explain(const AttentionArgs& args, const Context& ctx) const;
  // Validates args (an error leaves out untouched), then tries eligible
  // backends in order until one succeeds. `used` receives its name.
  Status run(const AttentionArgs& args, Context& ctx, std::string* used = nullptr);

  std::map<std::string, DispatchStats> stats() const;

 private:
  const Registry& registry_;
  Policy policy_;
  mutable std::mutex mu_;
  std::map<std::string, DispatchStats> stats_;
};

}  // namespace tessera
