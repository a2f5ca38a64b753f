"""Shared fixtures of the Python suite. ctest runs it (python.pytest) against
the build tree: PYTHONPATH=<build>/python, TESSERA_CLI=<build>/tessera."""

import os
import pathlib

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def cosine_rows(a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    return (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("TESSERA_CLI", str(REPO / "build" / "release" / "tessera"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"the tessera CLI is not at {path} (set TESSERA_CLI or build first)")
    return path


@pytest.fixture(scope="session")
def embedder():
    import tessera
    return tessera.Embedder()
