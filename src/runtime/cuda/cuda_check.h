// Turns CUDA runtime errors into Status values that name the call.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "tessera/status.h"

namespace tessera::cuda {

inline Status from_cuda(cudaError_t err, const char* call) {
  if (err == cudaSuccess) return Status::Ok();
  return internal_error(std::string(call) + ": " + cudaGetErrorName(err) + " (" +
                        cudaGetErrorString(err) + ")");
}

}  // namespace tessera::cuda

#define TESSERA_CUDA_RETURN_IF_ERROR(call) \
  TESSERA_RETURN_IF_ERROR(::tessera::cuda::from_cuda((call), #call))
