#include "backends/builtin_backends.h"
#include "tessera/registry.h"

namespace tessera {

void register_builtin_backends(Registry& registry) {
  // add() fails only on a duplicate name: two folders claiming one name.
  // attention_test (BuiltinBackends.EveryFolderRegistersUnderItsOwnName,
  // VariantsAreNamedAfterTheirBackend) catches that.
  for (auto& backend : make_builtin_backends()) (void)registry.add(std::move(backend));
}

}  // namespace tessera
