#include "xla/pjrt_plugin.h"

#include <dlfcn.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>

namespace tessera::xla {

namespace {

StatusCode code_of(PJRT_Error_Code code) {
  switch (code) {
    case PJRT_Error_Code_INVALID_ARGUMENT:
    case PJRT_Error_Code_OUT_OF_RANGE:
      return StatusCode::kInvalidArgument;
    case PJRT_Error_Code_RESOURCE_EXHAUSTED:
      return StatusCode::kResourceExhausted;
    case PJRT_Error_Code_NOT_FOUND:
      return StatusCode::kNotFound;
    case PJRT_Error_Code_UNIMPLEMENTED:
      return StatusCode::kUnsupported;
    case PJRT_Error_Code_UNAVAILABLE:
    case PJRT_Error_Code_FAILED_PRECONDITION:
      return StatusCode::kUnavailable;
    default:
      return StatusCode::kInternal;
  }
}

// The functions the backend calls; a plugin whose table lacks one is refused
// at load rather than crashing on a null pointer later.
struct Required {
  size_t offset;
  const char* name;
};
#define TESSERA_PJRT_REQUIRED(field) \
  { offsetof(PJRT_Api, field), #field }
constexpr Required kRequired[] = {
    TESSERA_PJRT_REQUIRED(PJRT_Error_Destroy),
    TESSERA_PJRT_REQUIRED(PJRT_Error_Message),
    TESSERA_PJRT_REQUIRED(PJRT_Error_GetCode),
    TESSERA_PJRT_REQUIRED(PJRT_Plugin_Initialize),
    TESSERA_PJRT_REQUIRED(PJRT_Event_Destroy),
    TESSERA_PJRT_REQUIRED(PJRT_Event_Await),
    TESSERA_PJRT_REQUIRED(PJRT_Client_Create),
    TESSERA_PJRT_REQUIRED(PJRT_Client_Destroy),
    TESSERA_PJRT_REQUIRED(PJRT_Client_PlatformName),
    TESSERA_PJRT_REQUIRED(PJRT_Client_AddressableDevices),
    TESSERA_PJRT_REQUIRED(PJRT_Client_Compile),
    TESSERA_PJRT_REQUIRED(PJRT_Client_BufferFromHostBuffer),
    TESSERA_PJRT_REQUIRED(PJRT_LoadedExecutable_Destroy),
    TESSERA_PJRT_REQUIRED(PJRT_LoadedExecutable_Execute),
    TESSERA_PJRT_REQUIRED(PJRT_Buffer_Destroy),
    TESSERA_PJRT_REQUIRED(PJRT_Buffer_ToHostBuffer),
};
#undef TESSERA_PJRT_REQUIRED

Status check_api(const std::string& path, const PJRT_Api* api) {
  const std::string where = "PJRT plugin " + path;
  if (api == nullptr) return invalid_argument(where + ": GetPjrtApi() returned null");
  if (api->struct_size < offsetof(PJRT_Api, pjrt_api_version) + sizeof(PJRT_Api_Version)) {
    return invalid_argument(where + ": PJRT_Api.struct_size = " + std::to_string(api->struct_size) +
                            " is too small to hold a version");
  }
  const int major = api->pjrt_api_version.major_version;
  const int minor = api->pjrt_api_version.minor_version;
  // A different major version means a rearranged ABI: nothing can be trusted.
  if (major != PJRT_API_MAJOR) {
    return unsupported(where + ": PJRT C API version " + std::to_string(major) + "." +
                       std::to_string(minor) + ", tessera is built for major version " +
                       std::to_string(PJRT_API_MAJOR) + " (header " +
                       std::to_string(PJRT_API_MAJOR) + "." + std::to_string(PJRT_API_MINOR) + ")");
  }
  // Within a major version fields are only appended, so an older or newer
  // minor works as long as the table reaches every function we call.
  for (const Required& r : kRequired) {
    if (!api_has(api, r.offset)) {
      return unsupported(
          where + " (PJRT C API " + std::to_string(major) + "." + std::to_string(minor) +
          ", PJRT_Api.struct_size = " + std::to_string(api->struct_size) + ") lacks " + r.name);
    }
  }
  return Status::Ok();
}

}  // namespace

bool api_has(const PJRT_Api* api, size_t offset) {
  if (api->struct_size < offset + sizeof(void*)) return false;
  void* slot;
  std::memcpy(&slot, reinterpret_cast<const char*>(api) + offset, sizeof slot);
  return slot != nullptr;
}

std::string PjrtPlugin::version() const {
  return std::to_string(major()) + "." + std::to_string(minor());
}

Status PjrtPlugin::status(PJRT_Error* error, std::string_view what) const {
  if (error == nullptr) return Status::Ok();
  PJRT_Error_Message_Args msg{};
  msg.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  msg.error = error;
  api_->PJRT_Error_Message(&msg);
  PJRT_Error_GetCode_Args code{};
  code.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
  code.error = error;
  PJRT_Error* code_error = api_->PJRT_Error_GetCode(&code);
  const PJRT_Error_Code pjrt_code = code_error == nullptr ? code.code : PJRT_Error_Code_UNKNOWN;
  std::string text = std::string(what) + ": " + std::string(msg.message, msg.message_size) +
                     " (PJRT code " + std::to_string(static_cast<int>(pjrt_code)) + ")";
  PJRT_Error_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
  destroy.error = code_error;
  if (code_error != nullptr) api_->PJRT_Error_Destroy(&destroy);
  destroy.error = error;
  api_->PJRT_Error_Destroy(&destroy);
  return {code_of(pjrt_code), std::move(text)};
}

Status PjrtPlugin::load(const std::string& path, const PjrtPlugin** out) {
  *out = nullptr;
  // Plugins are process-wide: one load (and one PJRT_Plugin_Initialize) per
  // path, successful or not, remembered for the life of the process.
  struct Entry {
    Status status;
    std::unique_ptr<PjrtPlugin> plugin;
  };
  static std::mutex mu;
  static auto* loaded =
      new std::map<std::string, Entry>();  // never destroyed: plugins outlive main
  const std::lock_guard<std::mutex> lock(mu);
  if (auto it = loaded->find(path); it != loaded->end()) {
    *out = it->second.plugin.get();
    return it->second.status;
  }
  Entry& entry = (*loaded)[path];
  entry.status = [&]() -> Status {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      return invalid_argument("cannot load PJRT plugin " + path + ": " +
                              (why != nullptr ? why : "dlopen failed"));
    }
    using GetPjrtApiFn = const PJRT_Api* (*)();
    auto* get_api = reinterpret_cast<GetPjrtApiFn>(dlsym(handle, "GetPjrtApi"));
    if (get_api == nullptr) {
      // Not a plugin; keep it loaded anyway: unloading a library whose
      // constructors ran is not safe in general.
      return invalid_argument(path + " is not a PJRT plugin: it exports no GetPjrtApi symbol");
    }
    const PJRT_Api* api = get_api();
    TESSERA_RETURN_IF_ERROR(check_api(path, api));
    auto plugin = std::unique_ptr<PjrtPlugin>(new PjrtPlugin(path, api));
    PJRT_Plugin_Initialize_Args init{};
    init.struct_size = PJRT_Plugin_Initialize_Args_STRUCT_SIZE;
    TESSERA_RETURN_IF_ERROR(
        plugin->status(api->PJRT_Plugin_Initialize(&init), "PJRT_Plugin_Initialize of " + path));
    entry.plugin = std::move(plugin);
    return Status::Ok();
  }();
  *out = entry.plugin.get();
  return entry.status;
}

}  // namespace tessera::xla
