// Fuzz target: the .npy reader of `tessera attention run` (header scanner,
// sizes checked before allocating), and the writer: whatever the reader
// accepts must survive a write and a second read unchanged.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "apps/tessera/npy.h"
#include "scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tessera::cli::NpyArray;
  std::istringstream in(std::string(tessera::fuzz::as_text(data, size)));
  NpyArray a;
  if (!tessera::cli::read_npy(in, "fuzz.npy", &a).ok()) return 0;
  const std::string path = tessera::fuzz::ScratchDir::get().write("roundtrip.npy", "");
  if (!tessera::cli::write_npy(path, a).ok()) std::abort();
  NpyArray b;
  if (!tessera::cli::read_npy(path, &b).ok()) std::abort();
  if (a.descr != b.descr || a.shape != b.shape || a.bytes != b.bytes) std::abort();
  return 0;
}
