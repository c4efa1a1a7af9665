"""explorer.papers.mechanisms.deberta: the three disentangled terms add up to the model's own attention."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from explorer.core.errors import ExplorerError
from explorer.papers.mechanisms import deberta


@functools.cache
def _split(key: str = "deberta-v3-base") -> deberta.DisentangledSplit:
    return deberta.split_attention(key, "Paris is the capital of France, and Rome is the capital of Italy.")


@pytest.mark.parametrize("key", deberta.SUPPORTED)
def test_terms_sum_to_the_models_own_probabilities(key: str) -> None:
    s = _split(key)
    h, n = s.c2c.shape[0], len(s.tokens)
    assert s.c2c.shape == s.c2p.shape == s.p2c.shape == s.model_probs.shape == (h, n, n)
    e = np.exp(s.total - s.total.max(-1, keepdims=True))
    np.testing.assert_allclose(e / e.sum(-1, keepdims=True), s.model_probs, atol=1e-5)
    assert s.max_prob_error < 1e-5 and s.max_bias_error < 1e-5


def test_every_term_matters() -> None:
    s = _split()
    for name, share in s.shares(0).items():
        assert share > 1e-4, name  # no term is identically zero: dropping one changes the scores
    e = np.exp(s.c2c - s.c2c.max(-1, keepdims=True))
    assert np.abs(e / e.sum(-1, keepdims=True) - s.model_probs).max() > 1e-3  # content alone is not the model


def test_relative_positions_are_i_minus_j() -> None:
    s = _split()
    n = len(s.tokens)
    i, j = np.indices((n, n))
    np.testing.assert_array_equal(s.relative, i - j)  # short text: every distance is its own bucket


def test_buckets_exact_near_log_far_and_antisymmetric() -> None:
    d, b = deberta.bucket_table(256, 512, 1024)
    near = np.abs(d) <= 128
    np.testing.assert_array_equal(b[near], d[near])
    inner = np.abs(d) <= 256
    np.testing.assert_array_equal(b[inner], -b[inner][::-1])
    assert np.all(np.diff(b) >= 0) and b.max() == 255 and b.min() == -256 and len(np.unique(b)) < len(d)


def test_bad_input() -> None:
    with pytest.raises(ExplorerError, match="choose one of"):
        deberta.split_attention("bert-base", "text")
    with pytest.raises(ExplorerError):
        deberta.split_attention("deberta-v3-base", "   ")
    assert "not in" in deberta.EMD_NOTE


@pytest.mark.parametrize("key", [k for k in deberta.SUPPORTED if k not in deberta.V1])
def test_variant_buckets_use_the_config(key: str) -> None:
    d, b, exact = deberta.variant_buckets(key)
    ref_d, ref_b = deberta.bucket_table(256, 512, 1024)  # both configs: 256 buckets, 512 positions
    np.testing.assert_array_equal(d, ref_d)
    np.testing.assert_array_equal(b, ref_b)
    assert exact == 128
    with pytest.raises(ExplorerError, match="choose one of"):
        deberta.variant_buckets("bert-base")


def test_v1_clamps_instead_of_bucketing() -> None:
    d, b, exact = deberta.variant_buckets("deberta-base")  # max_relative_positions -1 -> 512 positions
    assert exact == 512
    np.testing.assert_array_equal(b, np.clip(d, -512, 511))
    s = _split("deberta-base")
    assert s.tokens[0] == "Paris" and s.tokens[1] == "Ġis"  # GPT-2's BPE: DeBERTa v1's pieces
    n = len(s.tokens)
    i, j = np.indices((n, n))
    np.testing.assert_array_equal(s.relative, i - j)
    assert all(share > 1e-4 for share in s.shares(0).values())


def test_stand_in_tokenizers_are_the_catalogs():
    from explorer.architecture import catalog

    assert {k: catalog.get_variant(k).tokenizer for k in deberta.SUPPORTED} == deberta.STAND_IN
    assert deberta.STAND_IN["deberta-v3-base"] == "t5"  # one stand-in app-wide
