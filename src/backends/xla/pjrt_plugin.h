// A PJRT plugin loaded at run time: dlopen (RTLD_LOCAL, never unloaded, since
// plugins keep threads and static state alive), GetPjrtApi, the version and
// struct_size checks, PJRT_Plugin_Initialize. Every PJRT error becomes a
// Status carrying the plugin's own message and code.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "pjrt/pjrt_c_api.h"  // third_party/pjrt
#include "tessera/status.h"

namespace tessera::xla {

class PjrtPlugin {
 public:
  // Loads `path` once per process (a second call with the same path returns
  // the same plugin). Never crashes on a file that is not a plugin: a missing
  // file, a non-ELF file or a library without GetPjrtApi is an error naming
  // the path and what was wrong.
  static Status load(const std::string& path, const PjrtPlugin** out);

  const PJRT_Api* api() const { return api_; }
  const std::string& path() const { return path_; }
  int major() const { return api_->pjrt_api_version.major_version; }
  int minor() const { return api_->pjrt_api_version.minor_version; }
  std::string version() const;  // "0.81"

  // Converts (and destroys) a PJRT error: OK for nullptr; else a Status whose
  // message is "<what>: <plugin message> (PJRT code N)".
  Status status(PJRT_Error* error, std::string_view what) const;

 private:
  PjrtPlugin(std::string path, const PJRT_Api* api) : path_(std::move(path)), api_(api) {}
  std::string path_;
  const PJRT_Api* api_;
};

// Does the plugin's function table reach the slot at `offset` (offsetof in
// PJRT_Api) with a non-null entry? Older plugins have shorter tables.
bool api_has(const PJRT_Api* api, size_t offset);
#define TESSERA_PJRT_HAS(api, field) ::tessera::xla::api_has((api), offsetof(PJRT_Api, field))

}  // namespace tessera::xla
