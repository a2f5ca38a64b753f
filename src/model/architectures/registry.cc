#include <algorithm>

#include "model/architectures/architecture.h"

namespace tessera::model {

// Written by the build (builtin.cc.in): one call per folder.
void register_builtin_architectures(std::vector<const Architecture*>* out);

const std::vector<const Architecture*>& architectures() {
  static const std::vector<const Architecture*> all = [] {
    std::vector<const Architecture*> v;
    register_builtin_architectures(&v);
    return v;
  }();
  return all;
}

const Architecture* find_architecture(std::string_view model_type) {
  for (const Architecture* a : architectures()) {
    const std::vector<std::string> types = a->model_types();
    if (std::find(types.begin(), types.end(), model_type) != types.end()) return a;
  }
  return nullptr;
}

std::string supported_architectures() {
  std::string out;
  for (const Architecture* a : architectures()) {
    if (!out.empty()) out += ", ";
    out += a->name();
    out += " (model_type ";
    const std::vector<std::string> types = a->model_types();
    for (size_t i = 0; i < types.size(); ++i) out += (i ? ", \"" : "\"") + types[i] + "\"";
    out += ")";
  }
  return out;
}

}  // namespace tessera::model
