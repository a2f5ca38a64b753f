#include "cuda_flash/flash_kernel.cuh"
#include "cuda_flash/flash_launch.h"

namespace tessera::cuda_flash {
cudaError_t launch_flash_f16(const FlashParams& p, cudaStream_t stream) {
  return launch_flash_for_head_dim<__half>(p, stream);
}
}  // namespace tessera::cuda_flash
