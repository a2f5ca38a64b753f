#include "xla/xla_runtime.h"

#include <cstdlib>
#include <map>

#include "tessera/profiler.h"
#include "xla/plugin_discovery.h"
#include "xla/xla_flags.h"

namespace tessera::xla {

XlaRuntime& XlaRuntime::for_plugin(const std::string& plugin_path) {
  static std::mutex mu;
  static auto* runtimes = new std::map<std::string, std::unique_ptr<XlaRuntime>>();  // never freed
  const std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<XlaRuntime>& slot = (*runtimes)[plugin_path];
  if (slot == nullptr) slot.reset(new XlaRuntime(plugin_path));
  return *slot;
}

XlaRuntime::XlaRuntime(const std::string& requested_path) {
  status_ = [&]() -> Status {
    plugin_path_ = requested_path;
    if (plugin_path_.empty()) TESSERA_RETURN_IF_ERROR(find_pjrt_plugin(&plugin_path_));
    // Before the plugin is loaded: XLA aborts on flags it does not know.
    if (const char* flags = std::getenv("XLA_FLAGS"); flags != nullptr) {
      TESSERA_RETURN_IF_ERROR(check_xla_flags(flags, plugin_path_));
    }
    const PjrtPlugin* plugin = nullptr;
    TESSERA_RETURN_IF_ERROR(PjrtPlugin::load(plugin_path_, &plugin));
    return PjrtClient::get(plugin, &client_);
  }();
}

std::string XlaRuntime::describe() const {
  if (client_ == nullptr) return plugin_path_;
  return plugin_path_ + " (" + client_->platform() + ", PJRT C API " + client_->plugin().version() +
         ")";
}

Status XlaRuntime::executable(const ProgramKey& key, Context& ctx,
                              std::shared_ptr<PjrtExecutable>* out) {
  const std::lock_guard<std::mutex> lock(mu_);
  if (auto it = cache_.find(key); it != cache_.end()) {
    ++stats_.hits;
    *out = it->second;
    return Status::Ok();
  }
  ++stats_.misses;
  ScopedSpan span(ctx.profiler(), "xla.compile");
  span.span().backend = "xla";
  span.span().shape = key.describe();
  std::unique_ptr<PjrtExecutable> exe;
  Status st = client_->compile(attention_program(key), kProgramOutputs, &exe);
  span.set_ok(st.ok());
  TESSERA_RETURN_IF_ERROR(st);
  // The trace shows what XLA says one execution holds on the device.
  if (CompiledMemory memory; client_->compiled_memory(*exe, &memory).ok()) {
    span.span().workspace_bytes = static_cast<size_t>(memory.total());
  }
  *out = std::shared_ptr<PjrtExecutable>(std::move(exe));
  cache_.emplace(key, *out);
  stats_.entries = cache_.size();
  return Status::Ok();
}

CacheStats XlaRuntime::cache_stats() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace tessera::xla
