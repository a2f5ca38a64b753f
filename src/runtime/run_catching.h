#pragma once
// A program's last line of defence, shared by tessera's main and the bench
// tools: runs the program's body and turns an exception that escapes it (a
// bug, or a failed allocation) into one line on stderr and an exit code,
// instead of std::terminate's abort. The exception unwinds first, so
// destructors run and partial outputs (AtomicFile) are removed.
#include <cstdio>
#include <exception>

namespace tessera {

template <class Body>
int run_catching(const char* what, int exit_code, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", what, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: an exception of unknown type\n", what);
  }
  return exit_code;
}

}  // namespace tessera
