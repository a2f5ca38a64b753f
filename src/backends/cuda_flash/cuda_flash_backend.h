// cuda.flash: FlashAttention-2-class forward on NVIDIA tensor cores (sm_80+).
#pragma once

#include <memory>

#include "tessera/backend.h"

namespace tessera {

std::unique_ptr<Backend> make_cuda_flash_backend();

}  // namespace tessera
