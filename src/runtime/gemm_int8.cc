// int8 weights in linear() (runtime/gemm.h), part of the GEMM door.
// Both operands are quantized in a rotated basis: x and every row of W times
// H, block-diagonal orthonormal Walsh-Hadamard (rotate(); H H = I, so
// x W^T = (x H)(W H)^T). Rotating spreads the few large channels of BERT
// activations (GELU outputs above all) over the block, so one scale per row
// loses far less: all-mpnet-base-v2's worst golden cosine went 0.979 -> 0.998.
//   pack:   W~ = W H; s_w[c] = max_k |W~[c, k]| / 127 per output channel,
//           Wq = round(W~ / s_w) in s8 (the library's layout for a u8 x s8
//           product), colsum[c] = sum_k Wq[c, k]
//   linear: a thread's piece of rows, kInt8Rows at a time:
//           x~ = x H per row, then u8 with the row's own scale and zero point
//           over [min(x~_r, 0), max(x~_r, 0)]: s_r = range / 255,
//           z_r = round(-min / s_r), q = clamp(round(x~ / s_r) + z_r, 0, 255),
//           so x~ ~ s_r (q - z_r)
//           acc[r, c] = sum_k q[r, k] Wq[c, k]        (s32; VNNI / AMX kernel)
//           y[r, c] = gelu?(s_r s_w[c] (acc[r, c] - z_r colsum[c]) + b[c]) (+ y)
// x and y may be bf16 (LinearTypes): a bf16 row is widened before its
// rotation, and the pass rounds y to bf16 once, after the residual add.
// u8 rather than s8 activations: oneDNN 2.6's VNNI instruction takes u8 x s8;
// with s8 x it adds a compensation pass and ran 1.3x slower (64 x 1536 x 384,
// one thread: 740 vs 570 GOP/s). The zero point costs nothing (one term in
// the pass that scales anyway) and gives asymmetric rows (GELU outputs) the
// full 256 steps. Per-row scales are not a oneDNN 2.6 attribute its brgemm
// takes (a [M, 1] binary post-op falls back to reference loops), hence the
// own pass, on a block of kInt8Rows rows that is still in L2.
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "runtime/bf16_rows.h"
#include "runtime/cpu_features.h"
#include "runtime/gelu.h"
#include "runtime/gemm_int8_quantize.h"
#include "runtime/gemm_onednn.h"

namespace tessera {

namespace {

using dnnl::memory;
using gemm_detail::cpu_engine;
using gemm_detail::from_error;
using gemm_detail::round_up;
using I8Dt = memory::data_type;
using I8Tag = memory::format_tag;

// Rows per product: the block the pass reads back from L2 (64 x N f32), and
// the brgemm M that ran fastest (64: 740, 128: 740, 256: 707, 512: 232 GOP/s
// at N 1536, K 384 on one thread). The last block of a piece is padded to it,
// so one primitive serves every M.
using int8_quantize::kInt8Rows;
using int8_quantize::quantize_rows;
using int8_quantize::rotate;
using int8_quantize::rotation_block;
constexpr float kS8Max = 127.0f;

memory::desc int8_x(int64_t k) { return memory::desc({kInt8Rows, k}, I8Dt::u8, I8Tag::ab); }
memory::desc int8_acc(int64_t n) { return memory::desc({kInt8Rows, n}, I8Dt::s32, I8Tag::ab); }

dnnl::matmul::primitive_desc int8_matmul_pd(const memory::desc& weights, int64_t n, int64_t k) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(int8_x(k), weights, int8_acc(n)), attr,
                                      cpu_engine());
}

memory::desc int8_any_weights(int64_t n, int64_t k) {
  return memory::desc({k, n}, I8Dt::s8, I8Tag::any);
}

// One weight shape's product primitive (the epilogue, GELU included, is the
// block pass's: one plan serves every epilogue).
struct Int8Plan {
  dnnl::matmul product;
  memory::desc block, scratch;
  int64_t n = 0, k = 0;
  // Per thread: the u8 rows, their scales and zero points, the block, the scratchpad.
  size_t x_bytes() const { return round_up(static_cast<size_t>(kInt8Rows * k)); }
  size_t rows_bytes() const { return round_up(2 * kInt8Rows * sizeof(float)); }
  size_t block_bytes() const { return round_up(block.get_size()); }
  size_t row_bytes() const { return round_up(static_cast<size_t>(k) * sizeof(float)); }
  size_t slot_bytes() const {
    return x_bytes() + rows_bytes() + block_bytes() + row_bytes() + round_up(scratch.get_size());
  }
};

Status make_int8_plan(const memory::desc& weights, int64_t n, int64_t k, Int8Plan* plan) {
  try {
    const auto pd = int8_matmul_pd(weights, n, k);
    plan->product = dnnl::matmul(pd);
    plan->scratch = pd.scratchpad_desc();
    plan->block = memory::desc({kInt8Rows, n}, I8Dt::f32, I8Tag::ab);
  } catch (const dnnl::error& e) {
    return from_error(e, "int8 matmul set-up", kInt8Rows, n, k);
  }
  plan->n = n;
  plan->k = k;
  return Status::Ok();
}

// Plans by (n, k): one per weight shape, whatever M and epilogue.
class Int8PlanCache {
 public:
  Status get(const memory::desc& weights, int64_t n, int64_t k, const Int8Plan** out) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto key = std::make_pair(n, k);
    auto it = plans_.find(key);
    if (it == plans_.end()) {
      Int8Plan plan;
      TESSERA_RETURN_IF_ERROR(make_int8_plan(weights, n, k, &plan));
      it = plans_.emplace(key, std::move(plan)).first;
    }
    *out = &it->second;  // std::map: stable while other shapes are added
    return Status::Ok();
  }

 private:
  std::mutex mu_;
  std::map<std::pair<int64_t, int64_t>, Int8Plan> plans_;
};

Int8PlanCache& int8_plans() {
  static Int8PlanCache* c = new Int8PlanCache();
  return *c;
}

// block[r, c] = s_r s_w[c] (acc[r, c] - z_r colsum[c]) + b[c], in place
// (the s32 sums read, the f32 values written, element by element).
TESSERA_INT8_CLONES void dequantize_block(void* block, int64_t n, const float* params,
                                          const float* w_scale, const float* colsum,
                                          const float* bias) {
  for (int64_t r = 0; r < kInt8Rows; ++r) {
    const int32_t* acc = static_cast<const int32_t*>(block) + r * n;
    float* out = static_cast<float*>(block) + r * n;
    const float s = params[2 * r], z = params[2 * r + 1];
#pragma omp simd
    for (int64_t c = 0; c < n; ++c) {
      const float v = s * w_scale[c] * (static_cast<float>(acc[c]) - z * colsum[c]);
      out[c] = bias ? v + bias[c] : v;
    }
  }
}

const char* const kInt8Instructions = "AMX-INT8, AVX512_VNNI or AVX-VNNI";

}  // namespace

Int8Isa Int8Isa::of_this_cpu() {
  Int8Isa isa;
  const CpuFeatures& f = cpu_features();  // TESSERA_CPU_CAP applied
  isa.avx512_vnni = f.avx512_vnni;
  isa.amx_int8 = f.amx_int8;
  isa.avx_vnni = f.avx_vnni;
  // As far as the library may use them (ONEDNN_MAX_CPU_ISA caps it; its ISA
  // values are masks, each containing the ones below it).
  const auto allowed = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto has = [allowed](dnnl_cpu_isa_t i) {
    return (allowed & static_cast<unsigned>(i)) == static_cast<unsigned>(i);
  };
  isa.amx_int8 = isa.amx_int8 && has(dnnl_cpu_isa_avx512_core_amx);
  isa.avx512_vnni = isa.avx512_vnni && has(dnnl_cpu_isa_avx512_core_vnni);
  isa.avx_vnni = isa.avx_vnni && has(dnnl_cpu_isa_avx2_vnni);
  return isa;
}

std::string int8_refusal(const Int8Isa& isa, const std::string& kernel) {
  if (!isa.amx_int8 && !isa.avx512_vnni && !isa.avx_vnni) {
    return std::string("int8 weights need an int8 dot-product instruction (") + kInt8Instructions +
           "); none of them is available on this CPU (kind " + cpu_kind_description() + ")";
  }
  if (kernel.empty() || kernel == "none" || kernel.rfind("ref", 0) == 0) {
    return "int8 weights: " + gemm_library_version() +
           " has no fast int8 matrix kernel for this CPU (only '" +
           (kernel.empty() ? std::string("none") : kernel) + "')";
  }
  return "";
}

std::string Int8Linear::kernel() {
  try {
    return int8_matmul_pd(int8_any_weights(kInt8Rows * 2, kInt8Rows * 2), kInt8Rows * 2,
                          kInt8Rows * 2)
        .impl_info_str();
  } catch (const dnnl::error&) {
    return "none";
  }
}

Status Int8Linear::create(const float* w, int64_t n, int64_t k, TrackingAllocator& alloc,
                          std::string_view owner, PackedWeights* out) {
  const std::string refusal = int8_refusal(Int8Isa::of_this_cpu(), kernel());
  if (!refusal.empty()) {
    return unsupported(refusal);
  }
  PackedWeights result;
  try {
    const auto pd = int8_matmul_pd(int8_any_weights(n, k), n, k);
    result.layout_ =
        std::make_unique<PackedWeights::Layout>(PackedWeights::Layout{pd.weights_desc()});
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(
        alloc, round_up(2 * static_cast<size_t>(n) * sizeof(float)), owner, &result.channels_));
    float* w_scale = result.channels_.as<float>();
    float* colsum = w_scale + n;
    Buffer plain;
    TESSERA_RETURN_IF_ERROR(
        Buffer::allocate(alloc, static_cast<size_t>(n * k), "gemm.packed.staging", &plain));
    auto* q = static_cast<int8_t*>(plain.data());
    const int64_t block = rotation_block(k);
    std::vector<float> rotated(static_cast<size_t>(k));
    for (int64_t c = 0; c < n; ++c) {
      std::copy(w + c * k, w + (c + 1) * k, rotated.begin());
      rotate(rotated.data(), k, block);
      const float* wr = rotated.data();
      float absmax = 0.0f;
      for (int64_t i = 0; i < k; ++i) absmax = std::max(absmax, std::fabs(wr[i]));
      const float scale = absmax > 0.0f ? absmax / kS8Max : 1.0f;
      int32_t sum = 0;
      for (int64_t i = 0; i < k; ++i) {
        const auto v = static_cast<int8_t>(std::nearbyint(wr[i] / scale));
        q[c * k + i] = v;
        sum += v;
      }
      w_scale[c] = scale;
      colsum[c] = static_cast<float>(sum);
    }
    TESSERA_RETURN_IF_ERROR(
        Buffer::allocate(alloc, result.layout_->desc.get_size(), owner, &result.data_));
    memory src(memory::desc({k, n}, I8Dt::s8, memory::dims{1, k}), cpu_engine(), plain.data());
    memory dst(result.layout_->desc, cpu_engine(), result.data_.data());
    dnnl::stream stream(cpu_engine());
    dnnl::reorder(src, dst).execute(stream, src, dst);
    stream.wait();
  } catch (const dnnl::error& e) {
    return from_error(e, "int8 weight conversion", kInt8Rows, n, k);
  }
  result.n_ = n;
  result.k_ = k;
  result.type_ = WeightType::kInt8;
  *out = std::move(result);
  return Status::Ok();
}

Status Int8Linear::unpack(const PackedWeights& w, float* out) {
  const int64_t n = w.n_, k = w.k_;
  std::vector<int8_t> plain(static_cast<size_t>(n * k));
  try {
    memory src(w.layout_->desc, cpu_engine(), const_cast<void*>(w.data_.data()));
    memory dst(memory::desc({k, n}, I8Dt::s8, memory::dims{1, k}), cpu_engine(), plain.data());
    dnnl::stream stream(cpu_engine());
    dnnl::reorder(src, dst).execute(stream, src, dst);
    stream.wait();
  } catch (const dnnl::error& e) {
    return from_error(e, "int8 weight unpacking", kInt8Rows, n, k);
  }
  const float* w_scale = w.channels_.as<float>();
  const int64_t block = rotation_block(k);
  for (int64_t c = 0; c < n; ++c) {
    for (int64_t i = 0; i < k; ++i) out[c * k + i] = plain[c * k + i] * w_scale[c];
    rotate(out + c * k, k, block);  // back from the rotated basis (H H = I)
  }
  return Status::Ok();
}

Status Int8Linear::workspace_bytes(int threads, int64_t m, const PackedWeights& w, size_t* out) {
  if (m == 0) {
    *out = 0;
    return Status::Ok();
  }
  const Int8Plan* plan = nullptr;
  TESSERA_RETURN_IF_ERROR(int8_plans().get(w.layout_->desc, w.n_, w.k_, &plan));
  *out = plan->slot_bytes() * static_cast<size_t>(std::max(1, threads));
  return Status::Ok();
}

Status Int8Linear::run(ThreadPool& pool, int64_t m, LinearTypes types, const void* x,
                       const PackedWeights& w, const LinearEpilogue& e, void* y, void* workspace,
                       size_t workspace_bytes) {
  const int64_t n = w.n_, k = w.k_;
  const Int8Plan* plan = nullptr;
  TESSERA_RETURN_IF_ERROR(int8_plans().get(w.layout_->desc, n, k, &plan));
  const int threads = pool.num_threads();
  const size_t slot = plan->slot_bytes();
  if (workspace_bytes < slot * static_cast<size_t>(threads)) {
    return invalid_argument("linear: workspace of " + std::to_string(workspace_bytes) +
                            " bytes; int8 " + gemm_detail::shape_text(m, n, k) + " on " +
                            std::to_string(threads) + " threads needs " +
                            std::to_string(slot * threads));
  }
  const gemm_detail::Pieces p = gemm_detail::cut(m, threads);
  const auto x_size = static_cast<int64_t>(dtype_size(types.x));
  const float* w_scale = w.channels_.as<float>();
  const float* colsum = w_scale + n;
  std::vector<Status> results(static_cast<size_t>(p.count));
  pool.parallel_for(p.count, [&](int64_t piece, int thread) {
    const int64_t r0 = piece * p.rows, r1 = std::min(m, r0 + p.rows);
    const ScopedGemmThreads one_thread(1);
    char* base = static_cast<char*>(workspace) + slot * static_cast<size_t>(thread);
    auto* q = reinterpret_cast<uint8_t*>(base);
    auto* params = reinterpret_cast<float*>(base + plan->x_bytes());
    void* block = base + plan->x_bytes() + plan->rows_bytes();
    auto* row = reinterpret_cast<float*>(static_cast<char*>(block) + plan->block_bytes());
    void* scratch = static_cast<char*>(block) + plan->block_bytes() + plan->row_bytes();
    try {
      dnnl::engine& eng = cpu_engine();
      dnnl::stream stream(eng);
      memory x_mem(int8_x(k), eng, q), block_s32(int8_acc(n), eng, block),
          scratch_mem(plan->scratch, eng, scratch);
      memory weights(w.layout_->desc, eng, const_cast<void*>(w.data_.data()));
      for (int64_t b0 = r0; b0 < r1; b0 += kInt8Rows) {
        const int64_t rows = std::min(kInt8Rows, r1 - b0);
        quantize_rows(static_cast<const char*>(x) + b0 * k * x_size, types.x, rows, k, q, params,
                      row);
        plan->product.execute(stream, {{DNNL_ARG_SRC, x_mem},
                                       {DNNL_ARG_WEIGHTS, weights},
                                       {DNNL_ARG_DST, block_s32},
                                       {DNNL_ARG_SCRATCHPAD, scratch_mem}});
        stream.wait();
        dequantize_block(block, n, params, w_scale, colsum, e.bias);
        if (e.gelu) gelu_in_place(static_cast<float*>(block), rows * n);
        const float* values = static_cast<const float*>(block);
        if (types.y == DType::kBF16) {
          f32_to_bf16_rows(values, rows * n, e.accumulate, static_cast<uint16_t*>(y) + b0 * n);
          continue;
        }
        float* out = static_cast<float*>(y) + b0 * n;
        if (e.accumulate) {
          for (int64_t i = 0; i < rows * n; ++i) out[i] += values[i];
        } else {
          std::memcpy(out, values, static_cast<size_t>(rows * n) * sizeof(float));
        }
      }
    } catch (const dnnl::error& err) {
      results[static_cast<size_t>(piece)] = from_error(err, "int8 matmul", r1 - r0, n, k);
    }
  });
  for (const Status& st : results) {
    TESSERA_RETURN_IF_ERROR(st);
  }
  return Status::Ok();
}

}  // namespace tessera
