#include "attention/staging/staging.h"

#include "runtime/device_memory.h"

namespace tessera {

namespace {

// Elements from a view's first element to its last, gaps included.
int64_t extent(const TensorView& t) {
  int64_t span = 1;
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] == 0) return 0;
    span += (t.shape[d] - 1) * t.strides[d];
  }
  return span;
}

}  // namespace

std::string device_staging_problem(Device device) {
  if (device.kind == DeviceKind::kCpu) return "";
  DeviceMemory* memory = device_memory(device);
  if (memory == nullptr) {
    return "device staging unsupported: this build has no memory operations for " +
           device.to_string();
  }
  std::string why;
  if (!memory->present(device, &why)) return "device absent: " + why;
  return "";
}

Status StagedArgs::stage(const AttentionArgs& src, Device target, size_t margin,
                         std::string_view owner, Context& ctx, StagedArgs* out) {
  const Device source = src.q.device;
  if ((source.kind == DeviceKind::kCpu) == (target.kind == DeviceKind::kCpu)) {
    return unsupported("device staging unsupported: " + source.to_string() + " to " +
                       target.to_string() + " (one side must be the host)");
  }
  const Device device = source.kind == DeviceKind::kCpu ? target : source;
  if (std::string why = device_staging_problem(device); !why.empty()) return unavailable(why);
  DeviceMemory& memory = *device_memory(device);
  StagedArgs s;
  s.args_ = src;
  s.source_device_ = source;
  s.target_ = target;
  s.alloc_ = target.kind == DeviceKind::kCpu ? &ctx.allocator() : &memory.allocator(target, ctx);
  struct Field {
    const char* name;
    TensorView* view;
    bool output;
  };
  const Field fields[] = {{"q", &s.args_.q, false},    {"k", &s.args_.k, false},
                          {"v", &s.args_.v, false},    {"bias", &s.args_.bias, false},
                          {"out", &s.args_.out, true}, {"lse", &s.args_.lse, true}};
  for (const Field& f : fields) {
    if (!f.view->present()) continue;
    Copy c{f.name, f.output, static_cast<char*>(f.view->data) - margin, Buffer(),
           static_cast<size_t>(extent(*f.view)) * dtype_size(f.view->dtype) + 2 * margin};
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(*s.alloc_, c.bytes, owner, &c.staged));
    if (target.kind == DeviceKind::kCpu) {
      TESSERA_RETURN_IF_ERROR(memory.copy_to_host(device, c.staged.data(), c.source, c.bytes, ctx));
    } else {
      TESSERA_RETURN_IF_ERROR(
          memory.copy_to_device(device, c.staged.data(), c.source, c.bytes, ctx));
    }
    f.view->data = c.staged.as<char>() + margin;
    f.view->device = target;
    s.copies_.push_back(std::move(c));
  }
  *out = std::move(s);
  return Status::Ok();
}

Status StagedArgs::copy_back(bool outputs, Context& ctx) const {
  const Device device = target_.kind == DeviceKind::kCpu ? source_device_ : target_;
  DeviceMemory* memory = device_memory(device);
  if (memory == nullptr) return unavailable(device_staging_problem(device));
  for (const Copy& c : copies_) {
    if (c.output != outputs) continue;
    if (target_.kind == DeviceKind::kCpu) {
      TESSERA_RETURN_IF_ERROR(
          memory->copy_to_device(device, c.source, c.staged.data(), c.bytes, ctx));
    } else {
      TESSERA_RETURN_IF_ERROR(
          memory->copy_to_host(device, c.source, c.staged.data(), c.bytes, ctx));
    }
  }
  return Status::Ok();
}

Status StagedArgs::copy_outputs_back(Context& ctx) const { return copy_back(true, ctx); }
Status StagedArgs::copy_inputs_back(Context& ctx) const { return copy_back(false, ctx); }

Status BackendPlacement::place(const Backend& backend, const AttentionProblem& host,
                               const std::string& owner, Context& ctx, BackendPlacement* out) {
  BackendPlacement p;
  p.host_ = &host;
  const Device device = backend.device();
  if (!(device == host.device())) {
    StagedArgs staged;
    TESSERA_RETURN_IF_ERROR(StagedArgs::stage(host.args(), device, 0, owner, ctx, &staged));
    p.staged_ = std::move(staged);
    TESSERA_RETURN_IF_ERROR(AttentionProblem::make(p.staged_->args(), &p.staged_problem_));
  }
  *out = std::move(p);
  return Status::Ok();
}

Status BackendPlacement::copy_outputs_back(Context& ctx) const {
  return staged_ ? staged_->copy_outputs_back(ctx) : Status::Ok();
}

Status HostCopy::make(const AttentionProblem& problem, const std::string& owner, Context& ctx,
                      HostCopy* out) {
  HostCopy h;
  h.original_ = &problem;
  if (problem.device().kind != DeviceKind::kCpu) {
    StagedArgs staged;
    TESSERA_RETURN_IF_ERROR(
        StagedArgs::stage(problem.args(), Device::cpu(), 0, owner, ctx, &staged));
    h.staged_ = std::move(staged);
    TESSERA_RETURN_IF_ERROR(AttentionProblem::make(h.staged_->args(), &h.copy_problem_));
  }
  *out = std::move(h);
  return Status::Ok();
}

}  // namespace tessera
