"""tessera.quantize_embeddings and tessera.quantization_ranges: the C++
implementation (include/tessera/quantize.h, the one `tessera embed
--precision`, the server and tessera.ray use) with
sentence_transformers.quantization.quantize_embeddings' calling conventions:
the same arguments, dtypes and shapes, and byte-for-byte the same values for
float32 inputs (tests/python/test_quantize.py, against
data/features/expected.json).

- int8 / uint8: per dimension, [min, max] of `ranges` (else of
  `calibration_embeddings`, else of the embeddings themselves) cut into 255
  steps; q = clip(floor((x - min) / step), 0, 255), minus 128 for int8
  (a dimension with min == max has step 1). Computed in float32.
- binary / ubinary: packbits(x > 0), the first dimension in the highest bit;
  binary is each byte minus 128 as int8. [n, ceil(dims / 8)].
- float32: the rows as float32.

Inputs are taken as float32 (a float64 array is cast first; sentence-
transformers computes its buckets in float64 then, which can put a value
that sits on a bucket boundary one bucket away). Non-finite values are
refused, naming the row and dimension.
"""

import logging

import numpy as np

from . import _tessera

_log = logging.getLogger("tessera")


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def _float32(value, name):
    """value (numpy array, torch tensor, nested lists) as a C-contiguous
    float32 numpy array."""
    if _is_torch(value):
        value = value.detach().cpu()
        if value.is_floating_point():
            value = value.float()
        value = value.numpy()
    a = np.asarray(value)
    if a.dtype in (np.int8, np.uint8):
        raise ValueError(f"{name}: dtype {a.dtype.name}: already quantized; quantize float "
                         "embeddings (as sentence-transformers, which refuses int8 and uint8 too)")
    if a.dtype.kind not in "fiu" and a.dtype.name != "bfloat16":
        raise ValueError(f"{name}: dtype {a.dtype.name} is not numeric")
    return np.ascontiguousarray(a, dtype=np.float32)


def _rows(value, name):
    """(float32 [n, dims] rows, whether value was one embedding [dims])."""
    a = _float32(value, name)
    if a.ndim == 1:
        return a.reshape(1, -1), True
    if a.ndim != 2:
        raise ValueError(f"{name}: shape {a.shape}: expected one embedding [dims] or rows "
                         "[n, dims]")
    return a, False


def _named(message, name):
    """The C++ message, naming `name` where it says "embeddings"."""
    if message.startswith("embeddings["):
        return name + message[len("embeddings"):]
    return f"{name}: {message}"


def _ranges_of(rows, name):
    try:
        return _tessera.quantization_ranges(rows)
    except ValueError as e:
        raise ValueError(_named(str(e), name)) from None


def _uses_ranges(precision):
    return precision in ("int8", "uint8")


def quantization_ranges(embeddings):
    """The ranges int8 / uint8 quantization needs: float32 [2, dims], the
    per-dimension minimum (row 0) and maximum (row 1) of `embeddings`
    ([n, dims], n >= 2, finite). Save them for `--quantization-ranges`
    (tessera embed, tessera serve, python -m tessera.ray):

        np.save("ranges.npy", tessera.quantization_ranges(calibration_rows))
    """
    rows, _ = _rows(embeddings, "embeddings")
    return _ranges_of(rows, "embeddings")


def quantize_embeddings(embeddings, precision, ranges=None, calibration_embeddings=None):
    """sentence_transformers.quantization.quantize_embeddings, computed by
    tessera's C++ core.

    embeddings: float rows [n, dims] or one embedding [dims] (numpy, torch,
        or a list of rows); a list of [tokens, dims] matrices (multi-vector)
        gives a list, quantized with one set of ranges.
    precision: "float32", "int8", "uint8", "binary" or "ubinary".
    ranges: float32 [2, dims] (per-dimension min, max) for int8 / uint8;
        None: from calibration_embeddings, else from the embeddings (which
        then need at least two rows).
    Returns int8 [n, dims] (int8), uint8 [n, dims] (uint8), int8
    [n, ceil(dims / 8)] (binary), uint8 [n, ceil(dims / 8)] (ubinary) or
    float32 [n, dims]; one embedding gives one row ([dims] or [ceil(dims/8)]).
    Errors are ValueError naming the argument (precision, embeddings, ranges,
    calibration_embeddings).
    """
    if not isinstance(precision, str):
        raise TypeError(f"precision: expected a str, got {type(precision).__name__}")
    _tessera.quantized_dtype(precision)  # an unknown name: ValueError listing the known ones
    if isinstance(embeddings, (list, tuple)):
        if not embeddings:
            return []
        first = embeddings[0]
        if (_is_torch(first) or isinstance(first, np.ndarray)) and first.ndim == 2:
            # Multi-vector documents: one set of ranges for all (as sentence-transformers).
            mats = [_rows(m, f"embeddings[{i}]")[0] for i, m in enumerate(embeddings)]
            if _uses_ranges(precision) and ranges is None:
                cal = (np.concatenate(mats) if calibration_embeddings is None
                       else _rows(calibration_embeddings, "calibration_embeddings")[0])
                if len(cal):
                    ranges = _ranges_of(cal, "embeddings" if calibration_embeddings is None
                                        else "calibration_embeddings")
            return [quantize_embeddings(m, precision, ranges, calibration_embeddings)
                    for m in mats]
    rows, single = _rows(embeddings, "embeddings")
    n, dims = rows.shape
    if precision == "float32":
        return rows[0].copy() if single else rows.copy()
    if n == 0:
        return np.zeros((0, _tessera.quantized_row_bytes(precision, dims)),
                        dtype=_tessera.quantized_dtype(precision))
    r = None
    if _uses_ranges(precision):
        if ranges is not None:
            r = _float32(ranges, "ranges")
            if r.shape != (2, dims):
                raise ValueError(f"ranges: shape {r.shape}, expected (2, {dims}): per-dimension "
                                 "min (row 0) and max (row 1)")
        elif calibration_embeddings is not None:
            cal, _ = _rows(calibration_embeddings, "calibration_embeddings")
            if cal.shape[1] != dims:
                raise ValueError(f"calibration_embeddings: {cal.shape[1]} dimensions, the "
                                 f"embeddings have {dims}")
            r = _ranges_of(cal, "calibration_embeddings")
        else:
            if n < 2:
                raise ValueError(
                    f"embeddings: cannot compute {precision} quantization ranges from a single "
                    "embedding; pass ranges (float32 [2, dims]: per-dimension min and max, e.g. "
                    "tessera.quantization_ranges(rows)) or calibration_embeddings from a "
                    "representative set")
            if n < 100:
                _log.warning("tessera: %s quantization ranges from %d embeddings; ranges from "
                             "more embeddings (ranges= or calibration_embeddings=) are more "
                             "stable", precision, n)
            r = _ranges_of(rows, "embeddings")
    out = _tessera.quantize_embeddings(rows, precision, r)
    return out[0] if single else out
