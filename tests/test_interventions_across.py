"""One typed pair across families: each model its grid on the relative-depth axis, a model that cannot take the
pair listed with its reason, the others unaffected."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.interventions import across
from tests.tiny_gemma import save_tiny_gemma
from tests.tiny_models import save_tiny

CLEAN, CORRUPT = "The Eiffel Tower is in the city of ___.", "The Colosseum is in the city of ___."


def test_a_decoder_a_masked_lm_and_t5_side_by_side(tmp_path) -> None:
    paths = [str(save_tiny_gemma(tmp_path / "gemma")), str(save_tiny("bert", tmp_path / "bert")),
             str(save_tiny("t5", tmp_path / "t5"))]
    result = across.across(paths, CLEAN, CORRUPT, "Paris", "Rome", device="cpu")
    families = {g.family for g in result.grids}
    assert families == {"decoder", "encoder-decoder"}  # BERT's WordPiece splits the two prompts differently
    assert [m for m, _ in result.refused] == [paths[1]] and "tokens" in result.refused[0][1]
    for grid in result.grids:
        assert grid.depth[0] == 0.0 and grid.depth[-1] == 1.0 and len(grid.depth) == len(grid.values)
    assert result.to_dict()["refused"][0]["model"] == paths[1]


def test_the_list_of_models_is_checked_first() -> None:
    with pytest.raises(ExplorerError, match="at most 4"):
        across.across(["a", "b", "c", "d", "e"], CLEAN, CORRUPT, "Paris", "Rome")
    with pytest.raises(ExplorerError, match="No model given"):
        across.across([" "], CLEAN, CORRUPT, "Paris", "Rome")
    with pytest.raises(ExplorerError, match="served by an inference engine"):
        across.across(["served:x"], CLEAN, CORRUPT, "Paris", "Rome")
