// Host entry points of the cuda.flash kernels, one per element type.
#pragma once

#include <cuda_runtime_api.h>

#include "cuda_flash/flash_params.h"

namespace tessera::cuda_flash {

cudaError_t launch_flash_f16(const FlashParams& p, cudaStream_t stream);
cudaError_t launch_flash_bf16(const FlashParams& p, cudaStream_t stream);

}  // namespace tessera::cuda_flash
