// The one PJRT client of a plugin in this process, and owning handles for
// what it hands out (executables, device buffers). Every call returns a
// Status carrying the plugin's message; nothing here aborts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/status.h"
#include "xla/pjrt_plugin.h"

namespace tessera::xla {

// Destroys what it holds through the plugin that made it.
class PjrtBuffer {
 public:
  PjrtBuffer() = default;
  PjrtBuffer(const PjrtPlugin* plugin, PJRT_Buffer* buffer) : plugin_(plugin), buffer_(buffer) {}
  PjrtBuffer(PjrtBuffer&& other) noexcept { *this = std::move(other); }
  PjrtBuffer& operator=(PjrtBuffer&& other) noexcept;
  ~PjrtBuffer() { reset(); }
  PJRT_Buffer* get() const { return buffer_; }
  void reset();

 private:
  const PjrtPlugin* plugin_ = nullptr;
  PJRT_Buffer* buffer_ = nullptr;
};

class PjrtExecutable {
 public:
  PjrtExecutable(const PjrtPlugin* plugin, PJRT_LoadedExecutable* exe, int num_outputs)
      : plugin_(plugin), exe_(exe), num_outputs_(num_outputs) {}
  PjrtExecutable(const PjrtExecutable&) = delete;
  PjrtExecutable& operator=(const PjrtExecutable&) = delete;
  ~PjrtExecutable();
  PJRT_LoadedExecutable* get() const { return exe_; }
  int num_outputs() const { return num_outputs_; }

 private:
  const PjrtPlugin* plugin_;
  PJRT_LoadedExecutable* exe_;
  int num_outputs_;
};

// What the compiler says one execution holds on the device (bytes).
struct CompiledMemory {
  int64_t arguments = 0, outputs = 0, temporaries = 0, code = 0;
  int64_t total() const { return arguments + outputs + temporaries; }
};

class PjrtClient {
 public:
  // Creates the client of `plugin` on first use; later calls return the same
  // one (one client per plugin per process: clients own thread pools).
  // Fails, with the plugin's reason, when the plugin finds no device.
  static Status get(const PjrtPlugin* plugin, PjrtClient** out);

  const PjrtPlugin& plugin() const { return *plugin_; }
  const std::string& platform() const { return platform_; }  // "cpu", "cuda", "tpu"

  // Compiles MLIR text (StableHLO) for the client's first device.
  Status compile(const std::string& mlir, int num_outputs,
                 std::unique_ptr<PjrtExecutable>* out) const;
  // Copies dense row-major host data onto the device; `data` may be freed
  // when this returns.
  Status to_device(const void* data, PJRT_Buffer_Type type, const std::vector<int64_t>& dims,
                   PjrtBuffer* out) const;
  // Runs on the first device; waits for completion.
  Status execute(const PjrtExecutable& exe, const std::vector<PJRT_Buffer*>& args,
                 std::vector<PjrtBuffer>* outputs) const;
  // The compiler's own memory figures (Unsupported when the plugin lacks
  // PJRT_Executable_GetCompiledMemoryStats).
  Status compiled_memory(const PjrtExecutable& exe, CompiledMemory* out) const;
  // Copies a device buffer into `bytes` of dense row-major host memory.
  Status to_host(const PjrtBuffer& buffer, void* dst, size_t bytes) const;

 private:
  explicit PjrtClient(const PjrtPlugin* plugin) : plugin_(plugin) {}
  Status create();
  Status await_and_destroy(PJRT_Event* event, std::string_view what) const;

  const PjrtPlugin* plugin_;
  PJRT_Client* client_ = nullptr;
  PJRT_Device* device_ = nullptr;
  std::string platform_;
};

}  // namespace tessera::xla
