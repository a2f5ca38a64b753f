// cpu.gemm: standard attention through the GEMM library (oneDNN, behind
// runtime/gemm.h): scores by one GEMM, a vectorized masked softmax, a second
// GEMM. It materializes the g*Sq x Sk score matrix of every head group in
// flight, so check() rejects args whose workspace exceeds the memory budget.
#pragma once

#include <memory>

#include "tessera/backend.h"

namespace tessera {

std::unique_ptr<Backend> make_cpu_gemm_backend();

}  // namespace tessera
