"""Forward pass (AppTest): the bundled decoder and encoder (tiny stand-ins here) walked side by side, stepping
through with the URL kept, a step the other model has not got said in words, bad input once before any model."""

from __future__ import annotations

import pytest

from tests.pages.conftest import assert_clean, figures, page_app, shown


def _page(**query: str):
    return page_app("forward.py", **query).run()


def test_both_bundled_models_walk_side_by_side_and_the_next_step_follows() -> None:
    at = _page()
    assert_clean(at)
    assert [s.value.split("\\:")[0].replace("\\", "") for s in at.subheader] == ["gemma3-270m", "sentence-bert"]
    assert any("How they differ" in m.value for m in at.markdown)
    assert any("rotated by their position" in m.value.replace("\\", "") for m in at.markdown)
    assert at.query_params["step"] == "0" and at.query_params["models"] == "gemma3-270m,sentence-bert"
    next(b for b in at.button if b.label == "Next ▶").click().run()
    assert_clean(at)
    assert at.query_params["step"] == "1"
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    assert any("residual stream's norm" in t for t in titles) and any("predicts" in t for t in titles)


def test_a_link_opens_its_step_and_a_kind_the_other_lacks_is_said() -> None:
    at = _page(step="9", head="1", token="2")
    assert_clean(at)
    assert at.selectbox(key="fw_step").value == 9 and at.query_params["head"] == "1"
    lead = [m.value.replace("\\", "") for m in at.markdown if m.value.replace("\\", "").startswith("**10.")]
    assert lead and "RoPE" in lead[0]  # Gemma's tenth step rotates the keys
    assert any("has no step of this kind" in i for i in shown(at.info))  # MiniLM rotates nothing


@pytest.mark.parametrize(("text", "said"), [("   ", "empty"), ("x" * 1001, "1,000")], ids=["blank", "long"])
def test_bad_text_is_one_message_before_any_model(text, said) -> None:
    at = _page(text=text)
    assert_clean(at, errors_expected=True)
    assert len(at.error) == 1 and said in shown(at.error)[0] and not figures(at)
