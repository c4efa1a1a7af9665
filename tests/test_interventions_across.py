"""One typed pair across families: each model its grid on the relative-depth axis, a model that cannot take the
pair listed with its reason, the others unaffected."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.interventions import across
from explorer.runtime.resolve import resolve
from tests.tiny_gemma import save_tiny_gemma
from tests.tiny_models import save_tiny

CLEAN, CORRUPT = "The Eiffel Tower is in the city of ___.", "The Colosseum is in the city of ___."


def test_a_decoder_a_masked_lm_and_t5_side_by_side(tmp_path) -> None:
    paths = [str(save_tiny_gemma(tmp_path / "gemma")), str(save_tiny("bert", tmp_path / "bert")),
             str(save_tiny("t5", tmp_path / "t5"))]
    result = across.across(across.local_refs(paths), CLEAN, CORRUPT, "Paris", "Rome", device="cpu")
    families = {g.family for g in result.grids}
    assert families == {"decoder", "encoder-decoder"}  # BERT's WordPiece splits the two prompts differently
    assert [m for m, _ in result.refused] == [paths[1]] and "tokens" in result.refused[0][1]
    for grid in result.grids:
        assert grid.depth[0] == 0.0 and grid.depth[-1] == 1.0 and len(grid.depth) == len(grid.values)
    assert result.to_dict()["refused"][0]["model"] == paths[1]


def test_the_list_of_models_is_checked_first() -> None:
    with pytest.raises(ExplorerError, match="at most 4"):
        across.local_refs(["a", "b", "c", "d", "e"])
    with pytest.raises(ExplorerError, match="No model given"):
        across.local_refs([" "])
    with pytest.raises(ExplorerError, match="served by an inference engine"):
        across.local_refs(["served:x"])
    # a library caller's refs get the same words, before any model loads
    with pytest.raises(ExplorerError, match="at most 4"):
        across.across([resolve(k) for k in "abcde"], CLEAN, CORRUPT, "Paris", "Rome")
    with pytest.raises(ExplorerError, match="No model given"):
        across.across([], CLEAN, CORRUPT, "Paris", "Rome")


def test_a_model_without_weights_is_listed_with_its_reason(tmp_path) -> None:
    """Resolved at the edge (nothing loaded), refused at its load with what resolve found; the same model twice is
    one entry."""
    refs = across.local_refs(["bert-base", "bert-base"], str(tmp_path))
    assert len(refs) == 1 and not refs[0].ready
    result = across.across(refs, CLEAN, CORRUPT, "Paris", "Rome", device="cpu")
    assert result.grids == () and result.refused == (("bert-base", refs[0].reason),)
