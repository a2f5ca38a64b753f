"""Embedder.similarity / similarity_pairwise against sentence-transformers'
own functions (data/golden/similarity.json, tools/make_module_models.py:
util.similarity's cos_sim, dot_score, euclidean_sim, manhattan_sim and their
pairwise forms on fixed rows), and the model's similarity_fn_name."""
import json

import numpy as np
import pytest

import tessera
from conftest import REPO

GOLDEN = json.loads((REPO / "data" / "golden" / "similarity.json").read_text())


@pytest.mark.parametrize("fn", ["cosine", "dot", "euclidean", "manhattan"])
def test_every_function_matches_sentence_transformers(embedder, fn):
    a, b = np.array(GOLDEN["a"], np.float32), np.array(GOLDEN["b"], np.float32)
    saved = embedder.similarity_fn_name
    try:
        embedder.similarity_fn_name = fn
        np.testing.assert_allclose(embedder.similarity(a, b), GOLDEN["matrix"][fn], atol=1e-5,
                                   rtol=1e-6)
        np.testing.assert_allclose(embedder.similarity_pairwise(a, b[:3]), GOLDEN["pairwise"][fn],
                                   atol=1e-5, rtol=1e-6)
    finally:
        embedder.similarity_fn_name = saved


def test_semantic_search_as_the_sentence_transformers_scripts_write_it(embedder):
    q = embedder.encode(["how do I bake bread?"])
    d = embedder.encode(["Mix flour, water and yeast, then bake.", "Paris is in France."])
    scores = embedder.similarity(q, d)
    assert scores.shape == (1, 2) and scores[0, 0] > scores[0, 1]
    assert embedder.similarity_fn_name == "cosine"  # all-MiniLM-L6-v2 names it
    with pytest.raises(ValueError, match="similarity_fn_name: 'l3' is not one of"):
        embedder.similarity_fn_name = "l3"
    with pytest.raises(ValueError, match="a has 384 dimensions, b 3"):
        embedder.similarity(q, np.ones((1, 3), np.float32))


def test_cross_encoder_activations_are_public():
    assert tessera.Identity()(np.array([2.0], np.float32))[0] == 2.0
    assert abs(tessera.Sigmoid()(np.array([0.0], np.float32))[0] - 0.5) < 1e-7
