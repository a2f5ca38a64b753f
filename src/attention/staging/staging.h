// Staging: an attention problem's tensors copied between host memory and a
// device (through runtime/device_memory.h and the device's tracked
// allocator), so one host-side judge — the conformance runner, shadow and
// canary runs — serves a backend wherever its tensors live. cu_seqlens stay
// in host memory: the contract puts them there on every device.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/allocator.h"
#include "tessera/attention.h"
#include "tessera/backend.h"
#include "tessera/context.h"
#include "tessera/problem.h"

namespace tessera {

// Why `device` cannot take staged tensors, "" when it can: "device absent:
// <why>" (built for it, not here) or "device staging unsupported: ..." (no
// memory operations for that kind in this build). Empty for the CPU.
std::string device_staging_problem(Device device);

// A copy of `src`'s tensors on `target`: host -> device, or device -> host
// (one side is the CPU). Each view is copied over its extent plus `margin`
// bytes either side (verify's guard bands), strides and gaps kept, so what a
// run writes next to a view comes back with it.
class StagedArgs {
 public:
  StagedArgs() = default;
  static Status stage(const AttentionArgs& src, Device target, size_t margin,
                      std::string_view owner, Context& ctx, StagedArgs* out);

  const AttentionArgs& args() const { return args_; }
  // The allocator holding the copies (a leak check reads its owners).
  TrackingAllocator* allocator() const { return alloc_; }
  // Copies out and lse (margins included) back over the source's memory.
  Status copy_outputs_back(Context& ctx) const;
  // Copies q, k, v and bias back as well (was an input modified?).
  Status copy_inputs_back(Context& ctx) const;

 private:
  struct Copy {
    const char* field;
    bool output;
    char* source;  // the source view's data minus the margin
    Buffer staged;
    size_t bytes;
  };
  AttentionArgs args_;
  Device source_device_{};
  Device target_{};
  TrackingAllocator* alloc_ = nullptr;
  std::vector<Copy> copies_;

  Status copy_back(bool outputs, Context& ctx) const;
};

// `host` (every tensor in host memory) as `backend` takes it: `host` itself
// for a CPU backend, else a copy staged on the backend's device whose outputs
// copy_outputs_back() returns into host's out and lse.
class BackendPlacement {
 public:
  static Status place(const Backend& backend, const AttentionProblem& host,
                      const std::string& owner, Context& ctx, BackendPlacement* out);
  const AttentionProblem& problem() const { return staged_problem_ ? *staged_problem_ : *host_; }
  Status copy_outputs_back(Context& ctx) const;

 private:
  const AttentionProblem* host_ = nullptr;
  std::optional<StagedArgs> staged_;
  std::optional<AttentionProblem> staged_problem_;
};

// `problem` with every tensor (outputs included) in host memory: itself when
// it already is, else a host copy read from its device.
class HostCopy {
 public:
  static Status make(const AttentionProblem& problem, const std::string& owner, Context& ctx,
                     HostCopy* out);
  const AttentionProblem& problem() const { return copy_problem_ ? *copy_problem_ : *original_; }

 private:
  const AttentionProblem* original_ = nullptr;
  std::optional<StagedArgs> staged_;
  std::optional<AttentionProblem> copy_problem_;
};

}  // namespace tessera
