"""AppTest of the objectives page: every strategy renders, statistics shown, hostile text handled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer.objectives import STRATEGIES
from explorer.objectives.mlm import budget

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "objectives.py")


def _run(text: str | None = None, **query: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["obj_draws"] = 100  # the statistics are tested in tests/test_objectives_*.py
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    if text is not None:
        at.text_area(key="obj_text").input(text).run()
    assert not at.exception, at.exception
    return at


def _html(at: AppTest) -> str:
    return "\n".join(el.proto.body for el in at.get("html"))


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_default_bert_view_shows_masks_and_exact_rate() -> None:
    at = _run()
    body = _html(at)
    assert "[MASK]" in body and "Legend" in body and "[CLS]" in body
    m = _metrics(at)
    assert m["Realised selection rate"] == m["Built to realise"]  # exact count every draw
    figs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    titles = " ".join(str(f["layout"].get("title", {}).get("text", "")) for f in figs)
    assert "Selected tokens by kind" in titles and "Selection frequency" in titles
    assert at.dataframe  # per-token table


def test_every_strategy_renders_through_the_pickers() -> None:
    at = _run()  # one AppTest for all: creating one costs more than running the page
    for name, s in STRATEGIES.items():
        at.selectbox(key="obj_group").set_value(s.group).run()
        at.selectbox(key=f"obj_strategy_{s.group}").set_value(name).run()
        assert not at.exception and not at.error, (name, at.exception, [e.value for e in at.error])
        assert at.query_params["strategy"] == [name] or at.query_params["strategy"] == name
        if name == "t5":
            assert "&lt;extra_id_0&gt;" in _html(at)
        if name == "roberta":
            titles = [json.loads(el.proto.spec)["layout"]["title"]["text"] for el in at.get("plotly_chart")]
            assert any("Red = [MASK]" in t for t in titles)  # dynamic vs static over epochs


def test_strategy_from_the_url() -> None:
    at = _run(strategy="spanbert")
    assert at.selectbox(key="obj_strategy_spans").value == "spanbert"
    assert "boundary" in " ".join(str(m.value) for m in at.markdown)


def test_electra_generator_option_and_labels() -> None:
    at = _run(strategy="electra")
    at.slider(key="obj_p_original").set_value(1.0).run()
    assert not at.exception
    assert "discriminator label 1" not in _html(at)  # every proposal is the original: all labels 0
    figs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    kinds = next(f for f in figs if "Selected tokens by kind" in f["layout"]["title"]["text"])
    assert list(kinds["data"][0]["x"]) == ["sampled = original"]


def test_hostile_text_is_shown_as_text() -> None:
    at = _run()
    for text in ["😀🎉🚀 emoji only 👍🏽", "שלום עולם. مرحبا بالعالم.",
                 "<script>alert('x')</script> <b>bold</b>.", "x"]:
        at.text_area(key="obj_text").input(text).run()
        assert not at.exception and not at.error, (text, [e.value for e in at.error])
        body = _html(at)
        assert "<script>" not in body and "<b>" not in body
    for text in ["", "   \n  "]:
        at.text_area(key="obj_text").input(text).run()
        assert not at.exception and at.error and "empty" in at.error[0].value
        assert len(at.error) == 1 and not at.tabs  # one box, not one per tab


def test_long_text_is_truncated_with_a_notice() -> None:
    at = _run("All work and no play makes Jack a dull boy. " * 1200)  # ~53,000 characters
    assert any("only the first 512" in w.value for w in at.warning)
    assert float(_metrics(at)["Built to realise"]) == pytest.approx(budget(510) / 510, abs=1e-4)


def test_decoding_and_distillation_widgets() -> None:
    at = _run()
    at.radio(key="obj_method").set_value("top-k").run()
    at.number_input(key="obj_topk").set_value(1).run()
    assert _metrics(at)["First sample"] == "mat"  # top-1 sampling is greedy
    at.slider(key="obj_dist_alpha").set_value(1.0).run()
    m = _metrics(at)
    assert float(m["loss = α·CE + (1-α)·T²·KL"]) == pytest.approx(float(m["CE (student vs true token)"]), abs=1e-4)
    at.slider(key="obj_dist_skill").set_value(1.0).run()
    assert float(_metrics(at)["KL(teacher_T ‖ student_T)"]) == pytest.approx(0.0, abs=1e-4)
    assert not at.exception


def test_the_c4_tab_counts_what_each_rule_removed_from_a_page_and_from_the_corpus() -> None:
    """T5's C4 cleaning, applied to a pasted page and to the bundled corpus."""
    from explorer.training import c4

    at = _run()
    captions = [c.value for c in at.caption]
    sample = c4.clean(at.text_area(key="c4_text").value)
    assert f"{sample.pages_kept} of {sample.pages_in} pages kept" in " ".join(captions)
    assert any("documents kept" in c for c in captions)
    rules = next(d.value for d in at.dataframe if "rule" in d.value.columns)
    assert list(rules["rule"]) == list(c4.RULES)
    at.text_area(key="c4_text").set_value("<b>one</b> line without an end").run()
    assert not at.exception and "0 of 1 pages kept" in " ".join(c.value for c in at.caption)
    at.text_area(key="c4_text").set_value("   ").run()
    assert any("empty" in e.value for e in at.error)
