"""Replaced-token detection page (AppTest): ELECTRA's generator and discriminator, the URL, bad and hostile input,
missing weights, and the way there from an old Fill-mask link."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.conftest import assert_clean, figures, page_app, shown

COLUMNS = ["original", "input", "replaced", "P(replaced)"]


@pytest.fixture(scope="module")
def default_run() -> AppTest:
    return page_app("electra.py").run()  # electra-small with random weights (nothing downloaded in tests)


def test_default_shows_the_strip_the_table_and_the_untrained_label(default_run) -> None:
    at = default_run
    assert_clean(at)
    assert at.selectbox(key="el_pair").value == "electra-small"
    assert any("Untrained weights: predictions are noise" in w for w in shown(at.warning))
    assert [f["data"][0]["type"] for f in figures(at)] == ["heatmap"]  # P(replaced) per token, one strip
    table = at.dataframe[0].value
    assert list(table.columns) == COLUMNS and table["P(replaced)"].between(0, 1).all()
    assert any("tokens replaced · accuracy at 0.5" in c.value for c in at.caption)
    assert dict(at.query_params) == {"pair": "electra-small", "seed": "0"}  # a shareable link


def test_pair_and_seed_come_from_the_url_and_garbage_falls_back() -> None:
    at = page_app("electra.py", pair="electra-base", seed="7").run()
    assert_clean(at)
    assert at.selectbox(key="el_pair").value == "electra-base" and at.number_input(key="el_seed").value == 7
    at = page_app("electra.py", pair="<script>", seed="lots").run()
    assert_clean(at)
    assert at.selectbox(key="el_pair").value == "electra-small" and at.number_input(key="el_seed").value == 0


def test_the_seed_changes_the_draw_and_the_url(default_run) -> None:
    at = default_run
    at.slider(key="el_frac").set_value(0.5)
    first = at.run().dataframe[0].value["input"].tolist()
    at.number_input(key="el_seed").set_value(3).run()
    assert_clean(at)
    assert at.query_params["seed"] == "3"
    assert at.dataframe[0].value["input"].tolist() != first  # another draw of masked positions


@pytest.mark.parametrize(("sentence", "message"), [("", "empty"), ("   ", "empty"), ("x" * 100_001, "limit")])
def test_bad_input_is_one_message(default_run, sentence: str, message: str) -> None:
    at = default_run
    at.text_input(key="el_text").set_value(sentence).run()
    assert_clean(at, errors_expected=True)
    assert [message in e for e in shown(at.error)] == [True]


def test_long_and_hostile_text_is_cut_and_shown_as_text(default_run) -> None:
    at = default_run
    at.text_input(key="el_text").set_value("<script>x</script> 🤖 مرحبا **b** " + "word " * 10_000).run()
    assert_clean(at)
    cut = [w for w in at.warning if w.icon == ":material/content_cut:"]
    assert len(cut) == 1 and "Only the first" in shown(cut)[0]  # a truncation notice: app.ui.notice's box
    assert at.dataframe[0].value["original"].iloc[0] == "<"  # shown as text in the table


def test_missing_weights_without_random_mode_are_a_warning(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))  # no real checkpoint from a developer's cache
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(tmp_path / "models"))
    at = page_app("electra.py").run()
    at.toggle(key="el_random").set_value(False).run()
    assert_clean(at)  # weights not downloaded yet is a state, not a failure
    warned = shown(at.warning)
    assert any("python -m explorer download electra-small-generator" in w for w in warned)
    assert any("python -m explorer download electra-small-discriminator" in w for w in warned)
    assert not at.dataframe and not figures(at)


def test_page_and_cli_share_one_library_call(monkeypatch) -> None:
    from explorer.tasks import discriminator

    calls = []
    real = discriminator.detect
    monkeypatch.setattr(discriminator, "detect", lambda *a, **k: calls.append(a[:2]) or real(*a, **k))
    at = page_app("electra.py").run()
    at.text_input(key="el_text").set_value("A sentence only this test [MASK].").run()
    assert_clean(at)
    assert tuple(ref.spec for ref in calls[-1]) == ("electra-small-generator", "electra-small-discriminator")  # refs


@pytest.mark.parametrize("models", ["electra-small-discriminator", "bert-base,electra-small"])
def test_an_old_fill_mask_link_naming_electra_says_where_it_went(models: str) -> None:
    at = page_app("fill_mask.py", models=models)
    at.session_state["fm_random"] = False  # nothing is loaded: only the pointer is under test
    at.run()
    assert_clean(at)
    assert any("electra-small" in i and "its own page" in i for i in shown(at.info))
    assert any(c.value == "Replaced-token detection with electra-small" for c in at.caption)  # the link, alone


def test_the_page_is_in_the_navigation() -> None:
    from app.navigation import SECTIONS

    entries = [e for pages in SECTIONS.values() for e in pages if e[0] == "electra.py"]
    assert len(entries) == 1 and entries[0][3] == "electra"
