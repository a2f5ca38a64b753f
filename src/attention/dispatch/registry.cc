#include "tessera/registry.h"

namespace tessera {

Status Registry::add(std::unique_ptr<Backend> backend) {
  if (backend == nullptr) return invalid_argument("Registry::add: backend is null");
  if (find(backend->name()) != nullptr) {
    return invalid_argument("backend '" + std::string(backend->name()) + "' is already registered");
  }
  backends_.push_back(std::move(backend));
  return Status::Ok();
}

Backend* Registry::find(std::string_view name) const {
  for (const auto& b : backends_) {
    if (b->name() == name) return b.get();
  }
  return nullptr;
}

std::vector<Backend*> Registry::backends() const {
  std::vector<Backend*> out;
  out.reserve(backends_.size());
  for (const auto& b : backends_) out.push_back(b.get());
  return out;
}

}  // namespace tessera
