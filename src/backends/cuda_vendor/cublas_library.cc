#include "cuda_vendor/cublas_library.h"

#include <dlfcn.h>

#include <mutex>

namespace tessera::cublas {

namespace {

#define TESSERA_STR2(x) #x
#define TESSERA_STR(x) TESSERA_STR2(x)
constexpr const char* kSoname = "libcublas.so." TESSERA_STR(CUBLAS_VER_MAJOR);

struct Loaded {
  Library lib;
  std::string error;  // empty: loaded
};

template <class Fn>
bool resolve(void* handle, const char* symbol, Fn* out, std::string* error) {
  *out = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (*out == nullptr) *error = std::string(kSoname) + " has no symbol " + symbol;
  return *out != nullptr;
}

Loaded load() {
  Loaded l;
  // Kept open for the life of the process: cuBLAS handles may outlive any scope.
  void* h = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    l.error = std::string("cannot load ") + kSoname + ": " + (e != nullptr ? e : "unknown error");
    return l;
  }
  Library& b = l.lib;
  if (resolve(h, "cublasCreate_v2", &b.create, &l.error) &&
      resolve(h, "cublasDestroy_v2", &b.destroy, &l.error) &&
      resolve(h, "cublasSetStream_v2", &b.set_stream, &l.error) &&
      resolve(h, "cublasGemmBatchedEx", &b.gemm_batched_ex, &l.error) &&
      resolve(h, "cublasGetStatusName", &b.status_name, &l.error) &&
      resolve(h, "cublasGetStatusString", &b.status_string, &l.error)) {
    return l;
  }
  l.lib = Library{};
  return l;
}

}  // namespace

const Library* library(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.error.empty()) {
    if (why != nullptr) *why = loaded.error;
    return nullptr;
  }
  return &loaded.lib;
}

}  // namespace tessera::cublas
