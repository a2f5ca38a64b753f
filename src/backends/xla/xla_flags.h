// XLA reads XLA_FLAGS once, inside the plugin, and aborts the whole process on
// an entry it does not know ("Unknown flag in XLA_FLAGS", a fatal log). So the
// flags are checked before the plugin is loaded: every entry must be
// --name[=value] with a name the plugin binary contains.
#pragma once

#include <string>
#include <string_view>

#include "tessera/status.h"

namespace tessera::xla {

// OK when XLA_FLAGS (`flags`) is safe to hand to the plugin at `plugin_path`;
// else InvalidArgument naming the entry.
Status check_xla_flags(std::string_view flags, const std::string& plugin_path);

}  // namespace tessera::xla
