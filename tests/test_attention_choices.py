"""explorer.tasks.attention.choices: the bundled model first, downloaded ones, or small random-weight variants."""

from __future__ import annotations

from explorer.architecture import catalog
from explorer.tasks import attention as A
from explorer.tasks.attention import choices


def test_trained_options_start_with_the_bundled_model(tmp_path) -> None:
    options = A.model_options(False, models_dir=str(tmp_path))  # an empty models directory
    assert options[0] == (choices.BUNDLED, f"{catalog.get_variant(choices.BUNDLED).name} (bundled)")
    assert len({k for k, _ in options}) == len(options)


def test_random_options_are_small_catalog_variants() -> None:
    options = dict(A.model_options(True))
    variants = catalog.load_catalog()
    assert "t5-small" in options and "bert-base" in options
    assert "bert-large" not in options and "t5-11b" not in options
    for key, label in options.items():
        assert label == f"{variants[key].name} (untrained)"
        assert (variants[key].published_params or 0) <= choices.RANDOM_MAX_PARAMS
