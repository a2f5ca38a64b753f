#include "tensor_bridge.h"

#include <string>

#include "status_errors.h"

namespace nb = nanobind;

namespace tessera::python {
namespace {

Status dtype_of(nb::dlpack::dtype t, bool uint16_is_bf16, const char* field, DType* out) {
  using Code = nb::dlpack::dtype_code;
  const auto code = static_cast<Code>(t.code);
  if (t.lanes == 1) {
    if (code == Code::Float && t.bits == 32) return *out = DType::kF32, Status::Ok();
    if (code == Code::Float && t.bits == 16) return *out = DType::kF16, Status::Ok();
    if (code == Code::Bfloat && t.bits == 16) return *out = DType::kBF16, Status::Ok();
    if (code == Code::UInt && t.bits == 16 && uint16_is_bf16) {
      return *out = DType::kBF16, Status::Ok();
    }
  }
  return invalid_argument(std::string(field) + ": dtype (DLPack code " + std::to_string(t.code) +
                          ", " + std::to_string(t.bits) +
                          " bits) is not float32, float16 or bfloat16");
}

Status device_of(int32_t type, int32_t id, const char* field, Device* out) {
  if (type == nb::device::cpu::value) return *out = Device::cpu(), Status::Ok();
  if (type == nb::device::cuda::value) return *out = Device::cuda(id), Status::Ok();
  return invalid_argument(std::string(field) + ": DLPack device type " + std::to_string(type) +
                          " is neither the CPU nor a CUDA device");
}

template <typename Array>
TensorView view_of(const Array& a, void* data, const char* field, bool uint16_is_bf16) {
  TensorView v;
  throw_if_error(dtype_of(a.dtype(), uint16_is_bf16, field, &v.dtype));
  throw_if_error(device_of(a.device_type(), a.device_id(), field, &v.device));
  if (a.ndim() < 1 || a.ndim() > kMaxRank) {
    throw_if_error(invalid_argument(std::string(field) + ": rank " + std::to_string(a.ndim()) +
                                    " (tessera takes 1 to 4 dimensions here)"));
  }
  v.data = data;
  v.rank = static_cast<int>(a.ndim());
  for (int d = 0; d < v.rank; ++d) {
    v.shape[d] = static_cast<int64_t>(a.shape(d));
    v.strides[d] = a.stride(d);
  }
  return v;
}

}  // namespace

TensorView input_view(const InputArray& a, const char* field, bool uint16_is_bf16) {
  // tessera never writes through an input view; the contract's TensorView
  // has one pointer type for inputs and outputs.
  return view_of(a, const_cast<void*>(a.data()), field, uint16_is_bf16);
}

TensorView output_view(const OutputArray& a, const char* field, bool uint16_is_bf16) {
  return view_of(a, a.data(), field, uint16_is_bf16);
}

}  // namespace tessera::python
