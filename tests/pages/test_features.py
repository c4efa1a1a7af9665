"""Features (AppTest): a dictionary trained on the stand-in Gemma opens from the URL with its figures, a feature's
dashboard (top contexts, density, logit effect), a text's active features and a clamp's before and after; a folder
that holds no dictionary is one message."""

from __future__ import annotations

import pytest

from explorer.cli import main
from tests.pages.conftest import assert_clean, figures, page_app, shown


@pytest.fixture(scope="module")
def sae(tmp_path_factory):
    root = tmp_path_factory.mktemp("features-page")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EXPLORER_CACHE_DIR", str(root / "cache"))
        assert main(["sae", "train", "--model", "gemma3-270m", "--layer", "1", "--width", "32", "--k", "4",
                     "--tokens", "2048", "--seq-len", "32", "--heldout-tokens", "512", "--out", str(root / "sae"),
                     "--device", "cpu"]) == 0
        yield str(root / "sae")


def test_a_trained_dictionary_opens_with_its_dashboard_features_and_clamp(sae) -> None:
    at = page_app("features.py", sae=sae, feature="3").run()
    assert_clean(at)
    assert at.number_input(key="ft_feature").value == 3 and at.query_params["sae"] == sae
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    assert any("top contexts" in t for t in titles) and any(t.startswith("Active on") for t in titles)
    assert any("Logit effect" in t for t in titles) and any("KL" in t for t in titles)
    assert len(at.dataframe) >= 2  # the measured figures and the text's active features


def test_a_folder_without_a_dictionary_is_one_message(tmp_path) -> None:
    at = page_app("features.py", sae=str(tmp_path)).run()
    assert_clean(at, errors_expected=True)
    assert len(at.error) == 1 and "holds no dictionary" in shown(at.error)[0] and not figures(at)


def test_a_dictionary_made_for_another_model_is_one_message(tmp_path) -> None:
    from tests.test_features_files import _saelens_folder, _weights

    _saelens_folder(tmp_path / "other", _weights(),  # 16 wide: not the stand-in Gemma's stream
                    metadata={"model_name": "other", "hook_name": "blocks.1.hook_resid_post"})
    at = page_app("features.py", sae=str(tmp_path / "other")).run()
    assert_clean(at, errors_expected=True)
    assert len(at.error) == 1 and "made for another model" in shown(at.error)[0] and not figures(at)
