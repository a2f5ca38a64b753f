// Host side of cuda.flash: capability checks, the params block, the device
// copy of cu_seqlens, the launch and its error checks.
#include "cuda_flash/cuda_flash_backend.h"

#include "cuda_flash/flash_launch.h"
#include "cuda_flash/flash_traits.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_runtime.h"

namespace tessera {

namespace {

constexpr int kDevice = 0;

void copy_strides(const TensorView& t, int64_t* out, int rank) {
  for (int d = 0; d < rank; ++d) out[d] = t.shape[d] == 1 ? 0 : t.strides[d];
}

class CudaFlashBackend final : public Backend {
 public:
  std::string_view name() const override { return "cuda.flash"; }
  Device device() const override { return Device::cuda(kDevice); }
  int priority() const override { return 200; }  // a GPU beats every CPU path
  const Capabilities& capabilities() const override {
    static const Capabilities caps = [] {
      Capabilities c;
      c.dtypes = {DType::kF16, DType::kBF16};
      c.min_head_dim = 1;
      c.max_head_dim = cuda_flash::kMaxHeadDim;
      c.causal = c.window = c.bias = c.varlen = c.softcap = c.lse = c.gqa = true;
      c.dv_differs = false;
      // Compiled and reviewed, not yet run on a GPU: see docs/BENCHMARKS.md.
      c.maturity = Maturity::kExperimental;
      return c;
    }();
    return caps;
  }
  Availability availability() const override {
    std::string why;
    if (!cuda::device_available(kDevice, &why)) return {false, why};
    return {};
  }
  size_t workspace_bytes(const AttentionProblem& p, const Context& /*ctx*/) const override {
    const AttentionArgs& args = p.args();
    return args.varlen ? 2 * sizeof(int32_t) * static_cast<size_t>(args.varlen->batch + 1) : 0;
  }
  Status run(const AttentionProblem& p, Context& ctx) override;
};

Status CudaFlashBackend::run(const AttentionProblem& problem, Context& ctx) {
  const AttentionArgs& args = problem.args();
  const AttentionDims& dims = problem.dims();
  cuda_flash::FlashParams p{};
  p.q = args.q.data;
  p.k = args.k.data;
  p.v = args.v.data;
  p.out = args.out.data;
  p.lse = args.lse.present() ? static_cast<float*>(args.lse.data) : nullptr;
  p.bias = args.bias.present() ? static_cast<const float*>(args.bias.data) : nullptr;
  for (int d = 0; d < 4; ++d) {
    p.q_stride[d] = args.q.strides[d];
    p.k_stride[d] = args.k.strides[d];
    p.v_stride[d] = args.v.strides[d];
    p.out_stride[d] = args.out.strides[d];
  }
  if (args.lse.present()) copy_strides(args.lse, p.lse_stride, 3);
  if (args.bias.present()) copy_strides(args.bias, p.bias_stride, 4);
  p.batch = static_cast<int>(dims.batch);
  p.hq = static_cast<int>(dims.hq);
  p.hkv = static_cast<int>(dims.hkv);
  p.d = static_cast<int>(dims.d);
  p.sq = static_cast<int>(dims.sq);
  p.sk = static_cast<int>(dims.sk);
  p.scale = problem.scale();
  p.softcap = args.softcap;
  p.mask = static_cast<cuda_flash::MaskKind>(args.mask.kind);
  p.window_left = args.mask.kind == MaskKind::kCausal ? -1 : args.mask.window_left;
  p.window_right = args.mask.window_right;
  void* stream = ctx.device_stream();
  Buffer cu;
  if (args.varlen) {
    const size_t n = static_cast<size_t>(args.varlen->batch + 1);
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(cuda::device_allocator(ctx, kDevice),
                                             2 * n * sizeof(int32_t), "cuda.flash", &cu));
    auto* device_cu = cu.as<int32_t>();
    TESSERA_RETURN_IF_ERROR(
        cuda::copy_to_device(device_cu, args.varlen->cu_seqlens_q, n * sizeof(int32_t), stream));
    TESSERA_RETURN_IF_ERROR(cuda::copy_to_device(device_cu + n, args.varlen->cu_seqlens_k,
                                                 n * sizeof(int32_t), stream));
    p.cu_seqlens_q = device_cu;
    p.cu_seqlens_k = device_cu + n;
  }
  const auto s = static_cast<cudaStream_t>(stream);
  const cudaError_t err = args.q.dtype == DType::kF16 ? cuda_flash::launch_flash_f16(p, s)
                                                      : cuda_flash::launch_flash_bf16(p, s);
  TESSERA_RETURN_IF_ERROR(cuda::from_cuda(err, "cuda.flash kernel launch"));
  // Surface asynchronous faults here, with the backend's name, so the
  // dispatcher can fall back; the cu_seqlens copy is also freed after this.
  return cuda::synchronize(stream);
}

}  // namespace

std::unique_ptr<Backend> make_cuda_flash_backend() { return std::make_unique<CudaFlashBackend>(); }

}  // namespace tessera
