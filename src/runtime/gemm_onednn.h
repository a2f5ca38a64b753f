// What the GEMM door's files (gemm_packed.cc, gemm_int8.cc) share: oneDNN's
// engine, PackedWeights' layout, errors, and how linear() cuts rows into
// per-thread pieces. Internal to runtime/: nothing outside the door includes
// this (it includes oneDNN).
#pragma once

#include <algorithm>
#include <cstdint>
#include <dnnl.hpp>
#include <string>

#include "runtime/cpu_features.h"
#include "runtime/gemm.h"

namespace tessera {

struct PackedWeights::Layout {
  dnnl::memory::desc desc;
};

// int8 weights in linear() (gemm_int8.cc); PackedWeights and linear()
// (gemm_packed.cc) hand their int8 work to these.
class Int8Linear {
 public:
  static Status create(const float* w, int64_t n, int64_t k, TrackingAllocator& alloc,
                       std::string_view owner, PackedWeights* out);
  static Status unpack(const PackedWeights& w, float* out);
  static Status workspace_bytes(int threads, int64_t m, const PackedWeights& w, size_t* out);
  static Status run(ThreadPool& pool, int64_t m, LinearTypes types, const void* x,
                    const PackedWeights& w, const LinearEpilogue& e, void* y, void* workspace,
                    size_t workspace_bytes);
  static std::string kernel();
};

namespace gemm_detail {

// Pieces are a multiple of this many rows, so that batches of similar size
// share primitives (a pipeline's batches fill the same token budget), and no
// piece is smaller unless the whole product is.
constexpr int64_t kPieceQuantum = 64;

inline dnnl::engine& cpu_engine() {
  // cpu_features() first: TESSERA_CPU_CAP caps oneDNN's ISA before its first use.
  static dnnl::engine* e = (cpu_features(), new dnnl::engine(dnnl::engine::kind::cpu, 0));
  return *e;
}

inline std::string shape_text(int64_t m, int64_t n, int64_t k) {
  return "M = " + std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k);
}

inline Status from_error(const dnnl::error& e, const std::string& what, int64_t m, int64_t n,
                         int64_t k) {
  return internal_error(what + " failed (oneDNN: " + e.what() + ", status " +
                        std::to_string(e.status) + ") for " + shape_text(m, n, k));
}

inline size_t round_up(size_t bytes) {
  constexpr size_t a = TrackingAllocator::kAlignment;
  return (bytes + a - 1) / a * a;
}

// How linear() cuts m rows for `threads` threads: `count` pieces of `rows`
// rows, the last one possibly shorter.
struct Pieces {
  int64_t rows = 0, count = 0;
};

inline Pieces cut(int64_t m, int threads) {
  Pieces p;
  if (m <= 0) {
    return p;
  }
  const int64_t wanted = std::max<int64_t>(1, threads);
  const int64_t per = (m + wanted - 1) / wanted;
  p.rows = std::min(m, (per + kPieceQuantum - 1) / kPieceQuantum * kPieceQuantum);
  p.count = (m + p.rows - 1) / p.rows;
  return p;
}

}  // namespace gemm_detail
}  // namespace tessera
