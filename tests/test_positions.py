"""Each variant's positions: the scheme read from its card and config, and the view of one text (on the stand-ins
for the bundled Gemma and MiniLM, from the formulas for variants without weights)."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.architecture import catalog
from explorer.architecture.positions import formulas as f
from explorer.architecture.positions.scheme import KINDS, by_distance, scheme_of
from explorer.core.errors import ExplorerError
from explorer.tasks.positions import view

TEXT = "The cat sat on the mat because it was warm."


@pytest.mark.parametrize("key", catalog.keys())
def test_every_variant_has_a_scheme_of_a_known_kind(key) -> None:
    scheme = scheme_of(catalog.variant_config(key), key)
    out = scheme.to_dict()
    assert out["model"] == key and out["kind"] in KINDS
    if scheme.kind == "rotary":
        assert out["bases"] and out["rotary_dims"]
    if scheme.kind == "relative-buckets":
        assert out["buckets"] and out["max_distance"]
    series = by_distance(scheme, 8)
    assert len(series["distances"]) == 17 and all(len(v) == 17 for v in series["series"].values())


def test_the_cards_numbers_for_the_taught_variants() -> None:
    gemma = scheme_of(catalog.variant_config("gemma3-270m"), "gemma3-270m")
    assert dict(gemma.bases) == {"global": 1_000_000.0, "local": 10_000.0} and gemma.layout == "half"
    gptj = scheme_of(catalog.variant_config("gpt-j"), "gpt-j")
    assert gptj.rotary_dims == 64 and gptj.head_width == 256 and gptj.layout == "pairs"
    assert scheme_of(catalog.variant_config("m2m100")).style == "tensor2tensor"
    assert scheme_of(catalog.variant_config("deberta-v3-base")).to_dict()["position_buckets"] == 256


def test_t5s_series_are_its_buckets_both_ways() -> None:
    t5 = scheme_of(catalog.variant_config("t5-small"), "t5-small")
    series = by_distance(t5, 300)["series"]
    d = np.arange(-300, 301)
    assert series["bucket (encoder)"] == f.t5_bucket(d, True, 32, 128).tolist()
    assert series["bucket (decoder)"] == f.t5_bucket(d, False, 32, 128).tolist()


@pytest.mark.parametrize("bad", [0, -1, 10**9, True])
def test_a_bad_distance_is_refused(bad) -> None:
    with pytest.raises(ExplorerError, match="distance"):
        by_distance(scheme_of(catalog.variant_config("gpt2")), bad)


def test_the_bundled_gemmas_view_reads_its_rotary_module() -> None:
    v = view("gemma3-270m", TEXT, device="cpu")
    n = len(v.tokens)
    assert v.weights and v.pair.shape == (n, n) and np.allclose(np.diag(v.pair), 1.0, atol=1e-5)
    assert all(err < 1e-4 for _, err in v.checks)  # module against formula
    assert np.allclose(v.pair[1:, 1:], v.pair[:-1, :-1], atol=1e-5)  # depends on the distance only


def test_the_bundled_minilms_view_reads_its_table() -> None:
    v = view("all-MiniLM-L6-v2", TEXT, device="cpu")
    assert v.weights and v.table is not None and v.random is not None and v.table.shape == v.random.shape
    assert np.allclose(np.diag(v.pair), 1.0, atol=1e-5)


def test_a_variant_without_weights_is_drawn_from_its_formula() -> None:
    v = view("t5-small", TEXT)
    rel = np.arange(len(v.tokens))[None, :] - np.arange(len(v.tokens))[:, None]
    assert not v.weights and v.notes and np.array_equal(v.pair, f.t5_bucket(rel, True, 32, 128))


def test_an_empty_text_or_unknown_model_is_refused() -> None:
    with pytest.raises(ExplorerError):
        view("gemma3-270m", "   ")
    with pytest.raises(ExplorerError):
        view("no-such-model-here", TEXT)
