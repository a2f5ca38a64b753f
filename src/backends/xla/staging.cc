#include "xla/staging.h"

#include <cstring>

namespace tessera::xla {

namespace {

char* at(const TensorView& t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  return static_cast<char*>(t.data) +
         t.offset({i0, i1, i2, i3}) * static_cast<int64_t>(dtype_size(t.dtype));
}

// n elements of `size` bytes, `stride` elements apart on the strided side.
void copy_strided_to_dense(const char* src, int64_t stride, size_t size, int64_t n, char* dst) {
  if (stride == 1) {
    std::memcpy(dst, src, size * static_cast<size_t>(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * size, src + i * stride * size, size);
}

void copy_dense_to_strided(const char* src, size_t size, int64_t n, char* dst, int64_t stride) {
  if (stride == 1) {
    std::memcpy(dst, src, size * static_cast<size_t>(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride * size, src + i * size, size);
}

}  // namespace

void gather_rows(const TensorView& t, int64_t b, int64_t row_begin, int64_t rows,
                 int64_t rows_padded, void* dst) {
  const size_t size = dtype_size(t.dtype);
  const int64_t h = t.shape[2], x = t.shape[3];
  char* out = static_cast<char*>(dst);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < h; ++j) {
      copy_strided_to_dense(at(t, b, row_begin + r, j, 0), t.strides[3], size, x,
                            out + ((r * h + j) * x) * static_cast<int64_t>(size));
    }
  }
  const size_t row_bytes = static_cast<size_t>(h * x) * size;
  if (rows_padded > rows) {
    std::memset(out + rows * static_cast<int64_t>(row_bytes), 0,
                static_cast<size_t>(rows_padded - rows) * row_bytes);
  }
}

void scatter_rows(const void* src, const TensorView& t, int64_t b, int64_t row_begin,
                  int64_t rows) {
  const size_t size = dtype_size(t.dtype);
  const int64_t h = t.shape[2], x = t.shape[3];
  const char* in = static_cast<const char*>(src);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < h; ++j) {
      copy_dense_to_strided(in + ((r * h + j) * x) * static_cast<int64_t>(size), size, x,
                            at(t, b, row_begin + r, j, 0), t.strides[3]);
    }
  }
}

void gather_bias(const TensorView& bias, int64_t seq, int64_t hq, int64_t q0, int64_t rows,
                 int64_t tq, int64_t k_len, int64_t sk, float* dst) {
  std::memset(dst, 0, static_cast<size_t>(hq * tq * sk) * sizeof(float));
  const auto idx = [&](int dim, int64_t i) { return bias.shape[dim] == 1 ? 0 : i; };
  const int64_t stride_k = bias.shape[3] == 1 ? 0 : bias.strides[3];
  for (int64_t h = 0; h < hq; ++h) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = static_cast<const float*>(bias.data) +
                         bias.offset({idx(0, seq), idx(1, h), idx(2, q0 + r), 0});
      float* row = dst + (h * tq + r) * sk;
      for (int64_t j = 0; j < k_len; ++j) row[j] = src[j * stride_k];
    }
  }
}

void scatter_lse(const float* src, int64_t tq, const TensorView& lse, int64_t b, int64_t row_begin,
                 int64_t rows) {
  const int64_t hq = lse.shape[1];
  float* base = static_cast<float*>(lse.data);
  for (int64_t h = 0; h < hq; ++h) {
    for (int64_t r = 0; r < rows; ++r) base[lse.offset({b, h, row_begin + r})] = src[h * tq + r];
  }
}

}  // namespace tessera::xla
