"""tessera.quantize_embeddings / quantization_ranges against
sentence-transformers 6.3 (data/features/expected.json, made by
tools/make_feature_oracle.py): byte for byte on the oracle's own float32
rows, with its dtypes and shapes; errors name the argument."""

import json
import logging

import numpy as np
import pytest

import tessera
from conftest import REPO


@pytest.fixture(scope="module")
def oracle():
    with open(REPO / "data" / "features" / "expected.json", encoding="utf-8") as f:
        return json.load(f)


def f32(rows):
    return np.array(rows, dtype=np.float32)


def truncate_case(oracle, dim):
    return next(c for c in oracle["minilm"]["truncate_dim"]
                if c["dim"] == dim and c["normalize_embeddings"])


def test_quantize_embeddings_equals_sentence_transformers_byte_for_byte(oracle):
    q = oracle["quantization"]
    e = f32(oracle["minilm"]["float32"]["rows"])
    e383 = f32(truncate_case(oracle, 383)["rows"])
    r = f32(q["calibration"]["ranges"]["rows"])
    checked = []
    for case in q["cases"]:
        name = case["name"]
        if "values" not in case or name.startswith("encode_"):
            continue  # encode(precision=...) end to end: test_features.py
        precision = name.split("_")[0]
        rows = e383 if "dim383" in name else e
        kwargs = {}
        if "ranges" in case:
            kwargs["ranges"] = f32(case["ranges"]["rows"])
        elif "calibration_embeddings" in case:
            kwargs["calibration_embeddings"] = f32(case["calibration_embeddings"]["rows"])
        elif name.endswith("_ranges"):
            kwargs["ranges"] = r
        got = tessera.quantize_embeddings(rows, precision, **kwargs)
        assert got.dtype == np.dtype(case["dtype"]), name
        assert list(got.shape) == case["shape"], name
        np.testing.assert_array_equal(got, np.array(case["values"], dtype=case["dtype"]),
                                      err_msg=name)
        checked.append(name)
    # int8, uint8, binary, ubinary; int8 and uint8 with R (297 values outside
    # it: clipped); calibration_embeddings (6 rows); degenerate ranges (step 1);
    # 383 dimensions (a padded last byte), binary and ubinary.
    assert len(checked) == 10, checked


def test_quantization_ranges_are_min_and_max(oracle):
    e = f32(oracle["minilm"]["float32"]["rows"])
    r = tessera.quantization_ranges(e)
    assert r.dtype == np.float32 and r.shape == (2, 384)
    np.testing.assert_array_equal(r, np.vstack((e.min(0), e.max(0))))
    # Ranges from the rows are what int8 uses when given none.
    np.testing.assert_array_equal(tessera.quantize_embeddings(e, "int8"),
                                  tessera.quantize_embeddings(e, "int8", ranges=r))
    np.testing.assert_array_equal(tessera.quantize_embeddings(e, "uint8", calibration_embeddings=e),
                                  tessera.quantize_embeddings(e, "uint8", ranges=r))


def test_dtypes_shapes_and_input_forms():
    rng = np.random.default_rng(7)
    e = rng.standard_normal((6, 13)).astype(np.float32)
    r = tessera.quantization_ranges(e)
    for precision, dtype, width in (("float32", np.float32, 13), ("int8", np.int8, 13),
                                    ("uint8", np.uint8, 13), ("binary", np.int8, 2),
                                    ("ubinary", np.uint8, 2)):
        got = tessera.quantize_embeddings(e, precision, ranges=r)
        assert got.dtype == dtype and got.shape == (6, width), precision
        one = tessera.quantize_embeddings(e[2], precision, ranges=r)  # one embedding: one row
        assert one.shape == (width,)
        np.testing.assert_array_equal(one, got[2])
        # float64 and nested lists are taken as float32
        np.testing.assert_array_equal(
            tessera.quantize_embeddings(e.tolist(), precision, ranges=r), got)
        empty = tessera.quantize_embeddings(np.zeros((0, 13), np.float32), precision)
        assert empty.dtype == dtype and empty.shape == (0, width)
    # ubinary is numpy.packbits(x > 0); binary the same bytes minus 128.
    np.testing.assert_array_equal(tessera.quantize_embeddings(e, "ubinary"),
                                  np.packbits(e > 0, axis=-1))
    np.testing.assert_array_equal(tessera.quantize_embeddings(e, "binary").view(np.uint8),
                                  np.packbits(e > 0, axis=-1) ^ 0x80)
    assert tessera.quantize_embeddings([], "int8") == []
    # Multi-vector documents: one set of ranges for all of them.
    docs = tessera.quantize_embeddings([e[:4], e[4:]], "uint8")
    np.testing.assert_array_equal(np.concatenate(docs), tessera.quantize_embeddings(e, "uint8"))
    # A dimension with min == max has step 1, as sentence-transformers.
    flat = np.ones((3, 2), np.float32)
    np.testing.assert_array_equal(tessera.quantize_embeddings(flat, "uint8"), np.zeros((3, 2)))


def test_few_rows_warn_as_sentence_transformers(caplog):
    e = np.arange(8, dtype=np.float32).reshape(2, 4)
    with caplog.at_level(logging.WARNING, logger="tessera"):
        tessera.quantize_embeddings(e, "int8")
    assert "int8 quantization ranges from 2 embeddings" in caplog.text


def test_errors_name_the_argument():
    e = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    with pytest.raises(ValueError, match=r'precision = "fp8" is not a precision; expected one of '
                                         r"float32, int8, uint8, binary, ubinary"):
        tessera.quantize_embeddings(e, "fp8")
    with pytest.raises(ValueError, match=r"embeddings: cannot compute int8 quantization ranges "
                                         r"from a single embedding; pass ranges"):
        tessera.quantize_embeddings(e[0], "int8")
    with pytest.raises(ValueError, match=r"embeddings: cannot compute uint8 .*single"):
        tessera.quantize_embeddings(e[:1], "uint8")
    with pytest.raises(ValueError, match=r"ranges: shape \(6, 2\), expected \(2, 6\)"):
        tessera.quantize_embeddings(e, "int8", ranges=np.zeros((6, 2), np.float32))
    bad = tessera.quantization_ranges(e)
    bad[1, 3] = bad[0, 3] - 1
    with pytest.raises(ValueError, match=r"ranges\[1\]\[3\] \(max\) < ranges\[0\]\[3\] \(min\)"):
        tessera.quantize_embeddings(e, "int8", ranges=bad)
    with pytest.raises(ValueError, match=r"calibration_embeddings: 5 dimensions, the embeddings "
                                         r"have 6"):
        tessera.quantize_embeddings(e, "int8", calibration_embeddings=np.zeros((3, 5)))
    nan = e.copy()
    nan[2, 4] = np.nan
    with pytest.raises(ValueError, match=r"embeddings\[2\]\[4\] is nan: only finite"):
        tessera.quantize_embeddings(nan, "binary")
    with pytest.raises(ValueError, match=r"calibration_embeddings\[2\]\[4\] is nan"):
        tessera.quantize_embeddings(e, "uint8", calibration_embeddings=nan)
    with pytest.raises(ValueError, match=r"embeddings: dtype int8: already quantized"):
        tessera.quantize_embeddings(e.astype(np.int8), "binary")
    with pytest.raises(ValueError, match=r"embeddings: shape \(2, 2, 6\)"):
        tessera.quantize_embeddings(e.reshape(2, 2, 6), "binary")
    with pytest.raises(ValueError, match=r"embeddings: int8 / uint8 ranges cannot come from 1"):
        tessera.quantization_ranges(e[:1])
