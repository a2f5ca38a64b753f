// Registry: the backends this process knows, in registration order. Explicit
// registration (no static-initializer tricks): see register_builtin_backends.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "tessera/backend.h"

namespace tessera {

class Registry {
 public:
  // Fails if a backend of the same name is already registered.
  Status add(std::unique_ptr<Backend> backend);
  Backend* find(std::string_view name) const;
  std::vector<Backend*> backends() const;
  size_t size() const { return backends_.size(); }

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
};

// Adds every backend built (src/backends/*/; the list is generated: CONTRIBUTING).
void register_builtin_backends(Registry& registry);

}  // namespace tessera
