// DLPack arrays (numpy, torch, anything nanobind's ndarray accepts) as
// tessera TensorViews, without copies: the view keeps the array's own
// strides (in elements, as both sides count them). A numpy bfloat16 array
// (ml_dtypes) cannot cross DLPack, so the Python side passes it as a uint16
// view and says so with `uint16_is_bf16`.
#pragma once

#include <nanobind/ndarray.h>

#include "tessera/tensor.h"

namespace tessera::python {

using InputArray = nanobind::ndarray<nanobind::ro>;
using OutputArray = nanobind::ndarray<>;

// `field` ("query", "out") names the array in errors (ValueError): unsupported
// dtype, rank above 4, a device tessera does not know.
TensorView input_view(const InputArray& a, const char* field, bool uint16_is_bf16);
TensorView output_view(const OutputArray& a, const char* field, bool uint16_is_bf16);

}  // namespace tessera::python
