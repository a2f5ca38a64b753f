#include "model/heads/dense.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "model/heads/head_memory.h"
#include "model/safetensors.h"

namespace tessera::model {

namespace {

// `name` of `file` as f32 [shape] into a buffer of `alloc`.
Status read_tensor(const SafetensorsFile& file, const std::string& name,
                   const std::vector<int64_t>& shape, TrackingAllocator& alloc, Buffer* out) {
  const SafeTensor* t = file.find(name);
  if (t == nullptr) return not_found(file.path() + ": no tensor named '" + name + "'");
  if (t->shape != shape) {
    SafeTensor want;
    want.shape = shape;
    return invalid_argument(file.path() + ": tensor '" + name + "' has shape " + t->shape_string() +
                            " but its config.json implies " + want.shape_string());
  }
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(alloc, static_cast<size_t>(t->numel()) * sizeof(float),
                                           "model.weights", out));
  return file.read_f32(*t, out->as<float>());
}

Status pack(const SafetensorsFile& file, const std::string& name, int64_t n, int64_t k,
            TrackingAllocator& alloc, PackedWeights* out) {
  Buffer plain;
  TESSERA_RETURN_IF_ERROR(read_tensor(file, name, {n, k}, alloc, &plain));
  return PackedWeights::create(plain.as<float>(), n, k, WeightType::kF32, alloc, "model.weights",
                               out);
}

float activate(DenseActivation a, float x) {
  switch (a) {
    case DenseActivation::kIdentity:
      return x;
    case DenseActivation::kTanh:
      return std::tanh(x);
    case DenseActivation::kGelu:  // torch.nn.GELU(): the exact erf form
      return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case DenseActivation::kRelu:
      return x > 0 ? x : 0.0f;
    case DenseActivation::kSigmoid:
      return 1.0f / (1.0f + std::exp(-x));
    case DenseActivation::kSilu:
      return x / (1.0f + std::exp(-x));
  }
  return x;
}

}  // namespace

Status load_dense_weights(const DenseModule& d, TrackingAllocator& alloc, DenseWeights* out) {
  const std::string path = d.dir + "/model.safetensors";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) &&
      std::filesystem::exists(d.dir + "/pytorch_model.bin", ec)) {
    return unsupported(d.dir +
                       "/pytorch_model.bin: the Dense module's weights are only in "
                       "PyTorch's format, which tessera does not read yet; save the "
                       "model again with sentence-transformers (safetensors) to convert");
  }
  std::unique_ptr<SafetensorsFile> file;
  TESSERA_RETURN_IF_ERROR(SafetensorsFile::open(path, &file));
  DenseWeights w;
  TESSERA_RETURN_IF_ERROR(
      pack(*file, "linear.weight", d.out_features, d.in_features, alloc, &w.linear));
  if (d.bias) {
    TESSERA_RETURN_IF_ERROR(read_tensor(*file, "linear.bias", {d.out_features}, alloc, &w.bias));
  }
  if (d.residual && d.in_features != d.out_features) {
    TESSERA_RETURN_IF_ERROR(
        pack(*file, "residual.weight", d.out_features, d.in_features, alloc, &w.residual));
  }
  *out = std::move(w);
  return Status::Ok();
}

Status run_dense(const std::vector<DenseModule>& modules, const std::vector<DenseWeights>& weights,
                 const float* x, int64_t rows, Context& ctx, float* y) {
  if (rows == 0 || modules.empty()) return Status::Ok();
  int64_t widest = 0;
  size_t gemm_bytes = 0;
  for (size_t i = 0; i < modules.size(); ++i) {
    widest = std::max<int64_t>(widest, modules[i].out_features);
    size_t bytes = 0;
    TESSERA_RETURN_IF_ERROR(linear_workspace_bytes(ctx.pool().num_threads(), rows,
                                                   weights[i].linear, LinearEpilogue{}, &bytes));
    gemm_bytes = std::max(gemm_bytes, bytes);
  }
  HeadMemory work;
  TESSERA_RETURN_IF_ERROR(
      allocate_head_memory(ctx, static_cast<size_t>(2 * rows * widest), gemm_bytes, &work));
  float* ping = work.rows;
  float* pong = ping + rows * widest;
  void* workspace = work.workspace;
  const float* in = x;
  for (size_t i = 0; i < modules.size(); ++i) {
    const DenseModule& d = modules[i];
    const DenseWeights& w = weights[i];
    float* out = i + 1 == modules.size() ? y : (i % 2 == 0 ? ping : pong);
    const float* bias = w.bias.data() != nullptr ? w.bias.as<float>() : nullptr;
    TESSERA_RETURN_IF_ERROR(linear(ctx.pool(), rows, in, w.linear,
                                   LinearEpilogue{bias, false, false}, out, workspace, gemm_bytes));
    const int64_t n = rows * d.out_features;
    for (int64_t j = 0; j < n; ++j) out[j] = activate(d.activation, out[j]);
    if (d.residual && d.in_features == d.out_features) {
      for (int64_t j = 0; j < n; ++j) out[j] += in[j];
    } else if (d.residual) {
      TESSERA_RETURN_IF_ERROR(linear(ctx.pool(), rows, in, w.residual,
                                     LinearEpilogue{nullptr, false, true}, out, workspace,
                                     gemm_bytes));
    }
    in = out;
  }
  return Status::Ok();
}

}  // namespace tessera::model
