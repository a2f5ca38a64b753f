// Host side of cuda.vendor: per sequence and per chunk of heads,
//   S[h] = Q[h] K[h/g]^T     cuBLAS batched GEMM, f16/bf16 in, f32 out
//   P[h] = softmax(S[h])     our masked-softmax kernel (softmax.cu)
//   O[h] = P[h] V[h/g]       cuBLAS batched GEMM, f32 accumulation
// cuBLAS is column-major: a row-major [rows, cols] matrix with row stride ld
// is its column-major [cols, rows] with leading dimension ld, so each product
// is issued transposed (S^T = K Q^T, O^T = V^T P^T).
#include "cuda_vendor/cuda_vendor_backend.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "cuda_vendor/cublas_library.h"
#include "cuda_vendor/softmax_params.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_runtime.h"

namespace tessera {

namespace {

constexpr int kDevice = 0;
constexpr size_t kDefaultWorkspaceCap = size_t{1} << 30;  // without a budget

Status from_cublas(const cublas::Library& lib, cublasStatus_t st, const char* call) {
  if (st == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return internal_error(std::string(call) + ": " + lib.status_name(st) + " (" +
                        lib.status_string(st) + ")");
}

// Bytes of S (f32) and P (2 bytes) for one head of an [sq, sk] problem.
size_t per_head_bytes(int64_t sq, int64_t sk) { return static_cast<size_t>(sq * sk) * 6; }

class CudaVendorBackend final : public Backend {
 public:
  ~CudaVendorBackend() override {
    if (handle_ != nullptr) cublas::library(nullptr)->destroy(handle_);
  }
  std::string_view name() const override { return "cuda.vendor"; }
  Device device() const override { return Device::cuda(kDevice); }
  int priority() const override { return 150; }
  const Capabilities& capabilities() const override {
    static const Capabilities caps = [] {
      Capabilities c;
      c.dtypes = {DType::kF16, DType::kBF16};
      c.causal = c.window = c.bias = c.varlen = c.softcap = c.lse = c.gqa = c.dv_differs = true;
      c.maturity = Maturity::kExperimental;  // compiled, not yet run on a GPU
      return c;
    }();
    return caps;
  }
  Availability availability() const override {
    std::string why;
    if (!cuda::device_available(kDevice, &why)) return {false, why};
    if (cublas::library(&why) == nullptr) return {false, why};
    return {};
  }
  void check(const AttentionProblem& p, const Context& ctx, Reasons& why) const override {
    check_capabilities(capabilities(), device(), p, why);
    const AttentionArgs& args = p.args();
    for (const auto& [t, field] : {std::pair{&args.q, "q"}, std::pair{&args.k, "k"},
                                   std::pair{&args.v, "v"}, std::pair{&args.out, "out"}}) {
      if (t->strides[3] != 1) {
        why.add([&] {
          return std::string(field) + " needs unit stride on the head dim for cuBLAS, has " +
                 std::to_string(t->strides[3]);
        });
      }
    }
    const AttentionDims& d = p.dims();
    const size_t need = per_head_bytes(d.sq, d.sk);
    const auto budget = ctx.allocator().budget();
    const size_t cap = budget ? *budget : kDefaultWorkspaceCap;
    if (need > cap) {
      why.add([&] {
        return "one head's Sq x Sk workspace (" + std::to_string(need) + " bytes) exceeds the " +
               std::to_string(cap) + "-byte limit";
      });
    }
  }
  size_t workspace_bytes(const AttentionProblem& p, const Context& /*ctx*/) const override {
    return per_head_bytes(p.dims().sq, p.dims().sk) * static_cast<size_t>(p.dims().hq);
  }
  Status run(const AttentionProblem& p, Context& ctx) override;

 private:
  Status handle(const cublas::Library& lib, void* stream, cublasHandle_t* out);
  std::mutex mu_;
  cublasHandle_t handle_ = nullptr;
};

Status CudaVendorBackend::handle(const cublas::Library& lib, void* stream,
                                 cublasHandle_t* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (handle_ == nullptr) {
    TESSERA_RETURN_IF_ERROR(from_cublas(lib, lib.create(&handle_), "cublasCreate"));
  }
  TESSERA_RETURN_IF_ERROR(from_cublas(
      lib, lib.set_stream(handle_, static_cast<cudaStream_t>(stream)), "cublasSetStream"));
  *out = handle_;
  return Status::Ok();
}

Status CudaVendorBackend::run(const AttentionProblem& problem, Context& ctx) {
  const AttentionArgs& args = problem.args();
  const AttentionDims& d = problem.dims();
  void* stream = ctx.device_stream();
  std::string why;
  const cublas::Library* lib = cublas::library(&why);
  if (lib == nullptr) return unavailable("cuda.vendor: " + why);
  cublasHandle_t blas = nullptr;
  TESSERA_RETURN_IF_ERROR(handle(*lib, stream, &blas));
  const bool bf16 = args.q.dtype == DType::kBF16;
  const cudaDataType_t in_type = bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const size_t elt = dtype_size(args.q.dtype);
  const int64_t group = d.hq / d.hkv;
  const auto budget = ctx.allocator().budget();
  const size_t cap = budget ? *budget / 2 : kDefaultWorkspaceCap;
  TrackingAllocator& dev = cuda::device_allocator(ctx, kDevice);
  const float one = 1.0f, zero = 0.0f;

  for (int64_t b = 0; b < d.batch; ++b) {
    const SeqRange r = seq_range(args, b);
    if (r.q_len == 0) continue;
    const int64_t tb = args.varlen ? 0 : b;
    const int64_t chunk = std::clamp<int64_t>(
        static_cast<int64_t>(cap / std::max<size_t>(per_head_bytes(r.q_len, r.k_len), 1)), 1, d.hq);
    Buffer scores, probs, ptrs;
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(
        dev, std::max<size_t>(static_cast<size_t>(chunk * r.q_len * r.k_len) * 4, 4), "cuda.vendor",
        &scores));
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(
        dev, std::max<size_t>(static_cast<size_t>(chunk * r.q_len * r.k_len) * elt, 4),
        "cuda.vendor", &probs));
    TESSERA_RETURN_IF_ERROR(
        Buffer::allocate(dev, static_cast<size_t>(chunk) * 6 * sizeof(void*), "cuda.vendor", &ptrs));
    for (int64_t h0 = 0; h0 < d.hq; h0 += chunk) {
      const int64_t heads = std::min(chunk, d.hq - h0);
      // Pointer arrays for the two batched GEMMs: {K, Q, S} then {V, P, O}.
      std::vector<const void*> host(static_cast<size_t>(heads) * 6);
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t qh = h0 + h, kh = qh / group;
        const auto* q = static_cast<const char*>(args.q.data);
        const auto* k = static_cast<const char*>(args.k.data);
        const auto* v = static_cast<const char*>(args.v.data);
        auto* o = static_cast<char*>(args.out.data);
        host[h] = k + elt * (tb * args.k.strides[0] + r.k_begin * args.k.strides[1] +
                             kh * args.k.strides[2]);
        host[heads + h] = q + elt * (tb * args.q.strides[0] + r.q_begin * args.q.strides[1] +
                                     qh * args.q.strides[2]);
        host[2 * heads + h] = scores.as<char>() + 4 * h * r.q_len * r.k_len;
        host[3 * heads + h] = v + elt * (tb * args.v.strides[0] + r.k_begin * args.v.strides[1] +
                                         kh * args.v.strides[2]);
        host[4 * heads + h] = probs.as<char>() + elt * h * r.q_len * r.k_len;
        host[5 * heads + h] = o + elt * (tb * args.out.strides[0] +
                                         r.q_begin * args.out.strides[1] +
                                         qh * args.out.strides[2]);
      }
      TESSERA_RETURN_IF_ERROR(
          cuda::copy_to_device(ptrs.data(), host.data(), host.size() * sizeof(void*), stream));
      auto* const* dp = ptrs.as<void*>();
      TESSERA_RETURN_IF_ERROR(from_cublas(
          *lib, lib->gemm_batched_ex(blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(r.k_len),
                              static_cast<int>(r.q_len), static_cast<int>(d.d), &one, dp, in_type,
                              static_cast<int>(args.k.strides[1]), dp + heads, in_type,
                              static_cast<int>(args.q.strides[1]), &zero, dp + 2 * heads,
                              CUDA_R_32F, static_cast<int>(r.k_len), static_cast<int>(heads),
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmBatchedEx (scores)"));
      cuda_vendor::SoftmaxParams sp{};
      sp.scores = scores.as<float>();
      sp.probs = probs.data();
      if (args.lse.present()) {
        sp.lse = static_cast<float*>(args.lse.data) + tb * args.lse.strides[0] +
                 r.q_begin * args.lse.strides[2];
        sp.lse_head_stride = args.lse.strides[1];
        sp.lse_row_stride = args.lse.strides[2];
      }
      if (args.bias.present()) {
        sp.bias = static_cast<const float*>(args.bias.data);
        for (int i = 0; i < 4; ++i) sp.bias_stride[i] = args.bias.shape[i] == 1 ? 0 : args.bias.strides[i];
        sp.bias_batch = b;
      }
      sp.heads = static_cast<int>(heads);
      sp.sq = static_cast<int>(r.q_len);
      sp.sk = static_cast<int>(r.k_len);
      sp.head0 = static_cast<int>(h0);
      sp.scale = args.effective_scale();
      sp.softcap = args.softcap;
      sp.mask = static_cast<int>(args.mask.kind);
      sp.window_left = args.mask.kind == MaskKind::kCausal ? -1 : args.mask.window_left;
      sp.window_right = args.mask.window_right;
      sp.bf16 = bf16;
      TESSERA_RETURN_IF_ERROR(cuda::from_cuda(
          static_cast<cudaError_t>(cuda_vendor::launch_softmax(sp, stream)), "cuda.vendor softmax"));
      if (r.k_len == 0) {
        // No keys: P is empty, so O = 0 rows, written directly (k = 0 GEMMs
        // are not relied on).
        for (int64_t h = 0; h < heads; ++h) {
          TESSERA_CUDA_RETURN_IF_ERROR(cudaMemset2DAsync(
              const_cast<void*>(host[5 * heads + h]), elt * args.out.strides[1], 0, elt * d.dv,
              r.q_len, static_cast<cudaStream_t>(stream)));
        }
        continue;
      }
      TESSERA_RETURN_IF_ERROR(from_cublas(
          *lib, lib->gemm_batched_ex(blas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(d.dv),
                              static_cast<int>(r.q_len), static_cast<int>(r.k_len), &one,
                              dp + 3 * heads, in_type, static_cast<int>(args.v.strides[1]),
                              dp + 4 * heads, in_type, static_cast<int>(r.k_len), &zero,
                              dp + 5 * heads, in_type, static_cast<int>(args.out.strides[1]),
                              static_cast<int>(heads), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmBatchedEx (P.V)"));
      // The pointer array and workspace are reused by the next chunk.
      TESSERA_RETURN_IF_ERROR(cuda::synchronize(stream));
    }
  }
  return cuda::synchronize(stream);
}

}  // namespace

std::unique_ptr<Backend> make_cuda_vendor_backend() {
  return std::make_unique<CudaVendorBackend>();
}

}  // namespace tessera
