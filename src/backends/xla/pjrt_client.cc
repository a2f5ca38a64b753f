#include "xla/pjrt_client.h"

#include <map>
#include <mutex>

#include "xla/compile_options.h"

namespace tessera::xla {

PjrtBuffer& PjrtBuffer::operator=(PjrtBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    plugin_ = other.plugin_;
    buffer_ = other.buffer_;
    other.buffer_ = nullptr;
  }
  return *this;
}

void PjrtBuffer::reset() {
  if (buffer_ == nullptr) return;
  PJRT_Buffer_Destroy_Args args{};
  args.struct_size = PJRT_Buffer_Destroy_Args_STRUCT_SIZE;
  args.buffer = buffer_;
  // A failed destroy can only be reported, not undone.
  (void)plugin_->status(plugin_->api()->PJRT_Buffer_Destroy(&args), "PJRT_Buffer_Destroy");
  buffer_ = nullptr;
}

PjrtExecutable::~PjrtExecutable() {
  PJRT_LoadedExecutable_Destroy_Args args{};
  args.struct_size = PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE;
  args.executable = exe_;
  (void)plugin_->status(plugin_->api()->PJRT_LoadedExecutable_Destroy(&args),
                        "PJRT_LoadedExecutable_Destroy");
}

Status PjrtClient::get(const PjrtPlugin* plugin, PjrtClient** out) {
  struct Entry {
    Status status;
    PjrtClient* client = nullptr;
  };
  static std::mutex mu;
  // Never destroyed: a client's worker threads must not be torn down by
  // static destructors racing the plugin's own.
  static auto* clients = new std::map<const PjrtPlugin*, Entry>();
  const std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = clients->try_emplace(plugin);
  if (fresh) {
    auto* client = new PjrtClient(plugin);
    it->second.status = client->create();
    if (it->second.status.ok()) {
      it->second.client = client;
    } else {
      delete client;
    }
  }
  *out = it->second.client;
  return it->second.status;
}

Status PjrtClient::create() {
  const PJRT_Api* api = plugin_->api();
  // NVIDIA's plugin would otherwise reserve most of the GPU's memory at
  // start (as JAX does); tessera shares the device. Other plugins reject
  // options they do not know, so this one goes to that plugin only.
  static constexpr char kPreallocate[] = "preallocate";
  PJRT_NamedValue preallocate{};
  preallocate.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  preallocate.name = kPreallocate;
  preallocate.name_size = sizeof(kPreallocate) - 1;
  preallocate.type = PJRT_NamedValue_kBool;
  preallocate.bool_value = false;
  preallocate.value_size = 1;
  const bool cuda = plugin_->path().find("xla_cuda") != std::string::npos;
  PJRT_Client_Create_Args create{};
  create.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  create.create_options = cuda ? &preallocate : nullptr;
  create.num_options = cuda ? 1 : 0;
  TESSERA_RETURN_IF_ERROR(plugin_->status(api->PJRT_Client_Create(&create),
                                          "PJRT_Client_Create (" + plugin_->path() + ")"));
  client_ = create.client;

  PJRT_Client_PlatformName_Args name{};
  name.struct_size = PJRT_Client_PlatformName_Args_STRUCT_SIZE;
  name.client = client_;
  TESSERA_RETURN_IF_ERROR(
      plugin_->status(api->PJRT_Client_PlatformName(&name), "PJRT_Client_PlatformName"));
  platform_.assign(name.platform_name, name.platform_name_size);

  PJRT_Client_AddressableDevices_Args devices{};
  devices.struct_size = PJRT_Client_AddressableDevices_Args_STRUCT_SIZE;
  devices.client = client_;
  TESSERA_RETURN_IF_ERROR(plugin_->status(api->PJRT_Client_AddressableDevices(&devices),
                                          "PJRT_Client_AddressableDevices"));
  if (devices.num_addressable_devices == 0) {
    return unavailable("PJRT plugin " + plugin_->path() + " (platform " + platform_ +
                       ") has no addressable device");
  }
  device_ = devices.addressable_devices[0];
  return Status::Ok();
}

Status PjrtClient::await_and_destroy(PJRT_Event* event, std::string_view what) const {
  if (event == nullptr) return Status::Ok();
  const PJRT_Api* api = plugin_->api();
  PJRT_Event_Await_Args await{};
  await.struct_size = PJRT_Event_Await_Args_STRUCT_SIZE;
  await.event = event;
  Status st = plugin_->status(api->PJRT_Event_Await(&await), what);
  PJRT_Event_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Event_Destroy_Args_STRUCT_SIZE;
  destroy.event = event;
  Status destroyed = plugin_->status(api->PJRT_Event_Destroy(&destroy), "PJRT_Event_Destroy");
  return st.ok() ? destroyed : st;
}

Status PjrtClient::compile(const std::string& mlir, int num_outputs,
                           std::unique_ptr<PjrtExecutable>* out) const {
  static constexpr char kFormat[] = "mlir";
  PJRT_Program program{};
  program.struct_size = PJRT_Program_STRUCT_SIZE;
  program.code = const_cast<char*>(mlir.data());  // input only for Compile
  program.code_size = mlir.size();
  program.format = kFormat;
  program.format_size = sizeof(kFormat) - 1;
  const std::string options = single_device_compile_options();
  PJRT_Client_Compile_Args args{};
  args.struct_size = PJRT_Client_Compile_Args_STRUCT_SIZE;
  args.client = client_;
  args.program = &program;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  TESSERA_RETURN_IF_ERROR(
      plugin_->status(plugin_->api()->PJRT_Client_Compile(&args), "PJRT_Client_Compile"));
  *out = std::make_unique<PjrtExecutable>(plugin_, args.executable, num_outputs);
  return Status::Ok();
}

Status PjrtClient::to_device(const void* data, PJRT_Buffer_Type type,
                             const std::vector<int64_t>& dims, PjrtBuffer* out) const {
  PJRT_Client_BufferFromHostBuffer_Args args{};
  args.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
  args.client = client_;
  args.data = data;
  args.type = type;
  args.dims = dims.data();
  args.num_dims = dims.size();
  args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  args.device = device_;
  TESSERA_RETURN_IF_ERROR(plugin_->status(plugin_->api()->PJRT_Client_BufferFromHostBuffer(&args),
                                          "PJRT_Client_BufferFromHostBuffer"));
  *out = PjrtBuffer(plugin_, args.buffer);
  return await_and_destroy(args.done_with_host_buffer, "host-to-device copy");
}

Status PjrtClient::execute(const PjrtExecutable& exe, const std::vector<PJRT_Buffer*>& args,
                           std::vector<PjrtBuffer>* outputs) const {
  PJRT_ExecuteOptions options{};
  options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  PJRT_Buffer* const* arg_list = args.data();
  std::vector<PJRT_Buffer*> out_list(static_cast<size_t>(exe.num_outputs()), nullptr);
  PJRT_Buffer** out_lists[1] = {out_list.data()};
  PJRT_Event* done[1] = {nullptr};
  PJRT_LoadedExecutable_Execute_Args run{};
  run.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
  run.executable = exe.get();
  run.options = &options;
  run.argument_lists = &arg_list;
  run.num_devices = 1;
  run.num_args = args.size();
  run.output_lists = out_lists;
  run.device_complete_events = done;
  Status st = plugin_->status(plugin_->api()->PJRT_LoadedExecutable_Execute(&run),
                              "PJRT_LoadedExecutable_Execute");
  // Whatever happened, the outputs the plugin produced are ours to free.
  outputs->clear();
  for (PJRT_Buffer* b : out_list) outputs->emplace_back(plugin_, b);
  TESSERA_RETURN_IF_ERROR(st);
  return await_and_destroy(done[0], "execution");
}

Status PjrtClient::compiled_memory(const PjrtExecutable& exe, CompiledMemory* out) const {
  const PJRT_Api* api = plugin_->api();
  if (!TESSERA_PJRT_HAS(api, PJRT_LoadedExecutable_GetExecutable) ||
      !TESSERA_PJRT_HAS(api, PJRT_Executable_GetCompiledMemoryStats) ||
      !TESSERA_PJRT_HAS(api, PJRT_Executable_Destroy)) {
    return unsupported("PJRT plugin " + plugin_->path() + " reports no compiled memory stats");
  }
  PJRT_LoadedExecutable_GetExecutable_Args get{};
  get.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
  get.loaded_executable = exe.get();
  TESSERA_RETURN_IF_ERROR(plugin_->status(api->PJRT_LoadedExecutable_GetExecutable(&get),
                                          "PJRT_LoadedExecutable_GetExecutable"));
  PJRT_Executable_GetCompiledMemoryStats_Args stats{};
  stats.struct_size = PJRT_Executable_GetCompiledMemoryStats_Args_STRUCT_SIZE;
  stats.executable = get.executable;
  Status st = plugin_->status(api->PJRT_Executable_GetCompiledMemoryStats(&stats),
                              "PJRT_Executable_GetCompiledMemoryStats");
  PJRT_Executable_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE;
  destroy.executable = get.executable;
  const Status destroyed =
      plugin_->status(api->PJRT_Executable_Destroy(&destroy), "PJRT_Executable_Destroy");
  TESSERA_RETURN_IF_ERROR(st);
  TESSERA_RETURN_IF_ERROR(destroyed);
  out->arguments = stats.argument_size_in_bytes;
  out->outputs = stats.output_size_in_bytes;
  out->temporaries = stats.temp_size_in_bytes;
  out->code = stats.generated_code_size_in_bytes;
  return Status::Ok();
}

Status PjrtClient::to_host(const PjrtBuffer& buffer, void* dst, size_t bytes) const {
  PJRT_Buffer_ToHostBuffer_Args args{};
  args.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
  args.src = buffer.get();
  args.dst = dst;
  args.dst_size = bytes;
  TESSERA_RETURN_IF_ERROR(
      plugin_->status(plugin_->api()->PJRT_Buffer_ToHostBuffer(&args), "PJRT_Buffer_ToHostBuffer"));
  return await_and_destroy(args.event, "device-to-host copy");
}

}  // namespace tessera::xla
