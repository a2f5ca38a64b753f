// tessera.quantize_embeddings / tessera.quantization_ranges' compiled half:
// include/tessera/quantize.h (the one implementation the CLI, the server and
// the Ray job use) on numpy float32 rows. tessera/_quantize.py gives it
// sentence-transformers' calling conventions (1-D rows, lists, calibration
// embeddings, empty inputs) and names the arguments in its errors.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime_handle.h"
#include "status_errors.h"
#include "tessera/quantize.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tessera::python {
namespace {

using Rows = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

Precision precision_of(const std::string& name) {
  Precision p{};
  throw_if_error(parse_precision(name, "precision", &p));
  return p;
}

// A [rows, cols] numpy array of T over the bytes `held` owns (the capsule
// deletes them with the array).
template <typename T, typename Held>
nb::object matrix_over(Held* held, nb::capsule owner, size_t rows, size_t cols) {
  auto* data = reinterpret_cast<T*>(held->data());
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<2>>(data, {rows, cols}, owner));
}

template <typename T>
nb::capsule owner_of(std::vector<T>* held) {
  return nb::capsule(held, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
}

// rows [n, dims] -> [n, quantized_row_bytes]: int8 for int8 / binary, uint8
// for uint8 / ubinary, float32 for float32. ranges [2, dims] for int8 / uint8.
nb::object quantize(const Rows& rows, const std::string& precision,
                    const std::optional<Rows>& ranges) {
  const Precision p = precision_of(precision);
  const auto n = static_cast<int64_t>(rows.shape(0));
  const auto dims = static_cast<int64_t>(rows.shape(1));
  std::vector<float> r;
  if (ranges) {
    if (ranges->shape(0) != 2 || static_cast<int64_t>(ranges->shape(1)) != dims) {
      throw nb::value_error(("ranges: shape (" + std::to_string(ranges->shape(0)) + ", " +
                             std::to_string(ranges->shape(1)) + "), expected (2, " +
                             std::to_string(dims) + "): per-dimension min (row 0) and max (row 1)")
                                .c_str());
    }
    r.assign(ranges->data(), ranges->data() + 2 * dims);
  }
  auto* out = new std::vector<uint8_t>();
  nb::capsule owner = owner_of(out);  // frees `out` on an error too
  out->reserve(1);                    // a non-null data() for an empty result
  Status status;
  {
    nb::gil_scoped_release release;
    status = quantize_embeddings(rows.data(), n, dims, p, r, out);
  }
  throw_if_error(status);
  const auto width = static_cast<size_t>(quantized_row_bytes(p, dims));
  if (p == Precision::kFloat32) {
    return matrix_over<float>(out, owner, static_cast<size_t>(n), static_cast<size_t>(dims));
  }
  if (is_signed(p)) return matrix_over<int8_t>(out, owner, static_cast<size_t>(n), width);
  return matrix_over<uint8_t>(out, owner, static_cast<size_t>(n), width);
}

// rows [n, dims] (n >= 2) -> [2, dims] float32: per-dimension min, then max.
nb::object ranges_of(const Rows& rows) {
  const auto n = static_cast<int64_t>(rows.shape(0));
  const auto dims = static_cast<int64_t>(rows.shape(1));
  auto* out = new std::vector<float>();
  nb::capsule owner = owner_of(out);
  out->reserve(1);
  Status status;
  {
    nb::gil_scoped_release release;
    status = quantization_ranges(rows.data(), n, dims, out);
  }
  throw_if_error(status);
  return matrix_over<float>(out, owner, 2, static_cast<size_t>(dims));
}

}  // namespace

void bind_quantize(nb::module_& m) {
  m.def("quantize_embeddings", &quantize, "rows"_a, "precision"_a, "ranges"_a = nb::none());
  m.def("quantization_ranges", &ranges_of, "rows"_a);
  // The width of a quantized row and its numpy dtype, by the C++ rules
  // (an unknown precision raises ValueError naming the accepted ones).
  m.def(
      "quantized_row_bytes",
      [](const std::string& precision, int64_t dims) {
        return quantized_row_bytes(precision_of(precision), dims);
      },
      "precision"_a, "dims"_a);
  m.def(
      "quantized_dtype",
      [](const std::string& precision) -> const char* {
        const Precision p = precision_of(precision);
        if (p == Precision::kFloat32) return "float32";
        return is_signed(p) ? "int8" : "uint8";
      },
      "precision"_a);
}

}  // namespace tessera::python
