#include "tessera/tensor.h"

#include <sstream>

namespace tessera {

std::string Device::to_string() const {
  return kind == DeviceKind::kCpu ? "cpu" : "cuda:" + std::to_string(index);
}

TensorView TensorView::contiguous(void* data, DType dtype, std::initializer_list<int64_t> shape,
                                  Device device) {
  TensorView t;
  t.data = data;
  t.dtype = dtype;
  t.device = device;
  t.rank = static_cast<int>(shape.size());
  int i = 0;
  for (int64_t s : shape) t.shape[i++] = s;
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    t.strides[d] = stride;
    stride *= t.shape[d];
  }
  return t;
}

int64_t TensorView::numel() const {
  if (rank == 0) return 0;
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= shape[d];
  return n;
}

int64_t TensorView::offset(std::initializer_list<int64_t> index) const {
  int64_t off = 0;
  int d = 0;
  for (int64_t i : index) off += i * strides[d++];
  return off;
}

std::string TensorView::describe() const {
  std::ostringstream os;
  os << "[";
  for (int d = 0; d < rank; ++d) os << (d ? ", " : "") << shape[d];
  os << "] strides [";
  for (int d = 0; d < rank; ++d) os << (d ? ", " : "") << strides[d];
  os << "] " << dtype_name(dtype) << " " << device.to_string();
  return os.str();
}

}  // namespace tessera
