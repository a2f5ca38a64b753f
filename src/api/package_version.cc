// The library's version, for a program to check against the headers it was
// compiled with.
#include "tessera/runtime.h"

namespace tessera {

const char* library_version() { return TESSERA_VERSION; }

}  // namespace tessera
