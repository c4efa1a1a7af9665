"""Interventions page (AppTest): the default pair on the bundled Gemma shows a real patching grid, an ablation
table and a steered generation; the site and the URL drive it; bad input is one red box and the rest still draws."""

from __future__ import annotations

import math

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.conftest import assert_clean, figures, page_app, plotly_array, shown


@pytest.fixture(scope="module")
def default_run(bundled_decoder) -> AppTest:
    return page_app("interventions.py", timeout=900).run()


def _grid(at: AppTest) -> dict:
    return next(f for f in figures(at) if "Patching" in f["layout"]["title"]["text"])


def test_default_pair_on_gemma_shows_grid_ablation_and_steering(default_run) -> None:
    at = default_run
    assert_clean(at)
    heat = _grid(at)["data"][0]
    z = plotly_array(heat["z"])
    assert z.shape == (18, 9) and heat["x"][0] == "0 &lt;bos&gt;" and heat["x"][2] == "2  Eiffel"
    assert math.isclose(float(z[-1, -1]), 1.0, abs_tol=1e-3)  # the last layer at the last position: clean
    assert float(abs(z[:, :2]).max()) < 1e-3  # <bos> and "The" are the same in both prompts
    labels = [m.label for m in at.metric]
    assert labels[:3] == ["P( Paris) before", "after", "KL(before ‖ after)"]
    assert float(at.metric[1].value) < float(at.metric[0].value)  # head 12.2 carries Paris
    texts = [t.value for t in at.text]
    assert len(texts) == 2 and all(t.startswith("I think that you are") for t in texts) and texts[0] != texts[1]
    assert at.query_params["model"] == "gemma3-270m" and at.query_params["site"] == "resid"
    assert any("not verified on this machine" in s for s in shown(at.info))


def test_the_head_grid_has_a_column_per_head(default_run) -> None:
    at = default_run
    at.radio(key="iv_site").set_value("heads").run()
    assert_clean(at)
    heat = _grid(at)["data"][0]
    assert heat["x"] == ["head 0", "head 1", "head 2", "head 3"] and plotly_array(heat["z"]).shape == (18, 4)
    assert at.query_params["site"] == "heads"
    at.radio(key="iv_site").set_value("resid").run()


def test_unequal_prompts_are_one_red_box_and_the_rest_still_draws(default_run) -> None:
    at = default_run
    at.text_input(key="iv_corrupt").set_value("The Colosseum in Rome is in the city of ___.").run()
    assert_clean(at, errors_expected=True)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "9 tokens and the corrupted one" in errors[0]
    assert [m.label for m in at.metric][:1] == ["P( Paris) before"] and len(at.text) == 2


def test_the_url_seeds_the_pair(bundled_decoder) -> None:
    at = page_app("interventions.py", timeout=900, clean="The Louvre is in the city of ___.",
                  corrupt="The Vatican City in Rome is in the city of ___.", site="mlp", metric="prob", ab="3.1",
                  layer="4", coef="2.5", tokens="1", seed="nan").run()
    assert at.text_input(key="iv_clean").value == "The Louvre is in the city of ___."
    assert at.radio(key="iv_site").value == "mlp" and at.radio(key="iv_metric").value == "prob"
    assert at.text_input(key="iv_ab_spec").value == "3.1"
    assert [at.number_input(key=k).value for k in ("iv_st_layer", "iv_st_coef", "iv_st_tokens", "iv_st_seed")] == [
        4, 2.5, 1, 0]  # a seed that is no number falls back to the default
    assert_clean(at, errors_expected=True)
    assert "tokens and the corrupted one" in at.error[0].value  # a shared link with a bad pair: said in words


def test_ndif_without_a_key_is_refused_in_words(default_run, monkeypatch) -> None:
    from nnsight import CONFIG

    monkeypatch.setattr(CONFIG.API, "APIKEY", None)
    at = default_run
    at.button(key="iv_ndif_go").click().run()
    assert_clean(at, errors_expected=True)
    assert any("needs an NDIF API key" in e.value for e in at.error)
