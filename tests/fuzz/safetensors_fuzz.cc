// Fuzz target: a safetensors file (8-byte length, JSON header, tensor table,
// data). Whatever opens must hand out tensors that lie inside the file: each
// float tensor is converted, so ASan sees every byte read.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "model/safetensors.h"
#include "scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tessera::model::SafetensorsFile;
  const std::string path = tessera::fuzz::ScratchDir::get().write(
      "model.safetensors", tessera::fuzz::as_text(data, size));
  std::unique_ptr<SafetensorsFile> file;
  if (!SafetensorsFile::open(path, &file).ok()) return 0;
  std::vector<float> values;
  for (const auto& t : file->tensors()) {
    if (file->find(t.name) != &t) std::abort();  // the table is sorted and unique
    const int64_t numel = t.numel();             // every caller may ask, whatever the dtype
    if (!t.float_dtype) continue;
    if (static_cast<uint64_t>(numel) * 2 > t.bytes) std::abort();  // F16/BF16/F32: >= 2 bytes each
    values.resize(static_cast<size_t>(numel));
    (void)file->read_f32(t, values.data());
  }
  return 0;
}
