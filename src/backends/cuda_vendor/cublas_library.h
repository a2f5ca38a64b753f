// cuBLAS, opened with dlopen on first use instead of linked. Linking it made
// every tessera process, GPU or not, map and relocate libcublasLt: +148 MiB
// of resident memory for `tessera --help` (measured with VmRSS before and
// after loading it). CPU-only runs never touch it now.
#pragma once

#include <cublas_v2.h>

#include <string>

namespace tessera::cublas {

// The few entry points cuda.vendor calls; null until loaded.
struct Library {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  // cublasGemmBatchedEx is overloaded in C++ (a legacy cudaDataType compute
  // type); this is the exported one, with cublasComputeType_t.
  using GemmBatchedEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                           int, int, int, const void*, const void* const[],
                                           cudaDataType, int, const void* const[], cudaDataType,
                                           int, const void*, void* const[], cudaDataType, int, int,
                                           cublasComputeType_t, cublasGemmAlgo_t);
  GemmBatchedEx gemm_batched_ex = nullptr;
  decltype(&cublasGetStatusName) status_name = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// Loads libcublas.so.<major of the headers we built with> once per process.
// Null, with *why saying what failed, when it cannot be loaded.
const Library* library(std::string* why);

}  // namespace tessera::cublas
