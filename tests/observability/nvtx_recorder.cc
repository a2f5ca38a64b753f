// A test-only NVTX tool. NVTX3 loads it when NVTX_INJECTION64_PATH names it
// and calls InitializeInjectionNvtx2 with the application's export table;
// the tool replaces the range entry points in the application's function
// tables (core: default domain, core2: named domains) with recorders that
// append one line per event to the file named by TESSERA_NVTX_RECORD:
//   push <TAB> os-thread-id <TAB> domain <TAB> message
//   pop  <TAB> os-thread-id <TAB> domain
// The default domain is written as "(default)". Every line is flushed as it
// is written, so a crashing process still leaves what it did.
#define NVTX_NO_IMPL  // a tool: types and declarations only
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

// NVTX leaves this struct to tools: a domain handle points to one of these.
struct nvtxDomainRegistration_st {
  std::string name;
};

namespace {

constexpr char kDefaultDomain[] = "(default)";

std::mutex g_mu;
FILE* g_out = nullptr;
thread_local int t_depth = 0;  // this thread's push depth over all domains

long os_thread_id() { return ::syscall(SYS_gettid); }

const char* domain_name(nvtxDomainHandle_t domain) {
  return domain != nullptr ? domain->name.c_str() : kDefaultDomain;
}

std::string message_of(const nvtxEventAttributes_t* attributes) {
  if (attributes == nullptr) return "(no attributes)";
  if (attributes->messageType == NVTX_MESSAGE_TYPE_ASCII) return attributes->message.ascii;
  return "(message type " + std::to_string(attributes->messageType) + ")";
}

int record_push(const char* domain, const std::string& message) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::fprintf(g_out, "push\t%ld\t%s\t%s\n", os_thread_id(), domain, message.c_str());
  std::fflush(g_out);
  return t_depth++;
}

int record_pop(const char* domain) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::fprintf(g_out, "pop\t%ld\t%s\n", os_thread_id(), domain);
  std::fflush(g_out);
  return --t_depth;
}

nvtxDomainHandle_t domain_create_a(const char* name) {
  return new nvtxDomainRegistration_st{name};  // lives as long as the process
}
void domain_destroy(nvtxDomainHandle_t domain) { delete domain; }
int domain_range_push_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  return record_push(domain_name(domain), message_of(attributes));
}
int domain_range_pop(nvtxDomainHandle_t domain) { return record_pop(domain_name(domain)); }
int range_push_a(const char* message) { return record_push(kDefaultDomain, message); }
int range_push_ex(const nvtxEventAttributes_t* attributes) {
  return record_push(kDefaultDomain, message_of(attributes));
}
int range_pop() { return record_pop(kDefaultDomain); }

template <typename Fn>
bool install(NvtxFunctionTable table, unsigned int size, unsigned int id, Fn* fn) {
  if (table == nullptr || id >= size || table[id] == nullptr) return false;
  *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
  return true;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  const char* path = std::getenv("TESSERA_NVTX_RECORD");
  if (path == nullptr) return 0;  // nowhere to record: decline to attach
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned int core_size = 0, core2_size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) ||
      !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size)) {
    return 0;
  }
  g_out = std::fopen(path, "w");
  if (g_out == nullptr) return 0;
  const bool ok =
      install(core, core_size, NVTX_CBID_CORE_RangePushA, &range_push_a) &&
      install(core, core_size, NVTX_CBID_CORE_RangePushEx, &range_push_ex) &&
      install(core, core_size, NVTX_CBID_CORE_RangePop, &range_pop) &&
      install(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &domain_create_a) &&
      install(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, &domain_destroy) &&
      install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &domain_range_push_ex) &&
      install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &domain_range_pop);
  return ok ? 1 : 0;
}
