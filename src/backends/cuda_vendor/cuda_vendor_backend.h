// cuda.vendor: standard attention through NVIDIA's libraries — scores and
// P.V by cuBLAS batched GEMMs (tensor cores, f32 accumulation), a masked
// softmax kernel between them. O(Sq x Sk) workspace per head.
#pragma once

#include <memory>

#include "tessera/backend.h"

namespace tessera {

std::unique_ptr<Backend> make_cuda_vendor_backend();

}  // namespace tessera
