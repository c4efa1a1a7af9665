"""Mechanisms page (AppTest): each tab from a shared link, its numbers and figures, and bad input."""

from __future__ import annotations

import pytest

from explorer.runtime.resolve import resolve
from tests.pages.conftest import assert_clean, figures, page_app

HOSTILE = "<script>alert(1)</script> **bold** $x$ 🙂 مرحبا"


def test_deberta_tab_checks_the_split_and_states_the_emd() -> None:
    at = page_app("mechanisms.py", head="3").run()
    assert_clean(at)
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["max |softmax(c2c+c2p+p2c) − model's probabilities|"]) < 1e-5
    assert float(metrics["max |c2p+p2c − model's own position bias|"]) < 1e-5
    figs = figures(at)
    assert len(figs) == 2 and "head 3" in figs[0]["layout"]["title"]["text"]
    assert [a["text"] for a in figs[0]["layout"]["annotations"]][:4] == [
        "content→content", "content→position", "position→content", "sum"]
    assert any("enhanced mask decoder" in i.value for i in at.info)
    assert at.query_params["deberta"] == "deberta-v3-base" and at.query_params["head"] == "3"


def test_deberta_v1_from_a_link() -> None:
    at = page_app("mechanisms.py", deberta="deberta-base").run()
    assert_clean(at)
    assert at.selectbox(key="mech_deberta").value == "deberta-base"
    assert float(at.metric[0].value) < 1e-5
    assert "clamped" in figures(at)[1]["layout"]["title"]["text"]


def test_distillation_tab_from_a_link() -> None:
    at = page_app("mechanisms.py", tab="Distillation", T="4", seed="3").run()
    assert_clean(at)
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    assert len(titles) == 4 and titles[0].startswith("DistilBERT triple loss at T = 4")
    assert any("g(m) = m·12/4" in t for t in titles)
    assert any("TinyBERT 14.4M" in c.value for c in at.caption)
    assert "[MASK]" in at.code[0].value
    assert at.select_slider(key="mech_temperature").value == "4"
    assert any(c.value.startswith("Ran on cpu") and "float32" in c.value for c in at.caption)  # the sidebar's choice


def test_distillation_follows_the_sidebar_precision() -> None:
    at = page_app("mechanisms.py", tab="Distillation", device="cpu", dtype="bfloat16").run()
    assert_clean(at)
    assert any(c.value.startswith("Ran on cpu") and "bfloat16" in c.value for c in at.caption)


def test_text_tab_layouts_from_a_link() -> None:
    at = page_app("mechanisms.py", tab="Text-to-text", task="stsb", code="Reviews", src="de", tgt="en").run()
    assert_clean(at)
    figs = figures(at)
    assert len(figs) == 3
    assert figs[0]["data"][0]["text"][0][:5] == ["▁", "s", "t", "s", "b"]  # the stsb prefix, first
    assert figs[1]["data"][0]["text"][0][0] == "Reviews"
    assert figs[2]["data"][0]["text"][0][0] == "__de__"
    decoder = next(t for y, t in zip(figs[2]["data"][0]["y"], figs[2]["data"][0]["text"], strict=True)
                   if y.startswith("decoder input"))  # a long sequence wraps into rows
    assert decoder[:2] == ["&lt;/s&gt;", "__en__"]


@pytest.mark.parametrize("tab, key", [("DeBERTa attention", "mech_deberta_text"),
                                      ("Distillation", "mech_distil_text")])
@pytest.mark.parametrize("text", ["", "x" * 50_000], ids=["empty", "50k"])
def test_bad_sentence_is_one_message(tab: str, key: str, text: str) -> None:
    at = page_app("mechanisms.py", tab=tab).run()
    at.text_input(key=key).set_value(text).run()
    assert_clean(at, errors_expected=True)
    assert len(at.error) == 1 and ("empty" in at.error[0].value or "50,000" in at.error[0].value)


@pytest.mark.parametrize("tab, key", [("DeBERTa attention", "mech_deberta_text"),
                                      ("Distillation", "mech_distil_text"), ("Text-to-text", "mech_ctrl_Links")])
def test_hostile_text_is_just_text(tab: str, key: str) -> None:
    at = page_app("mechanisms.py", tab=tab).run()
    at.text_input(key=key).set_value(HOSTILE).run()
    assert_clean(at)
    for fig in figures(at):
        assert "<script>" not in str(fig)


def test_bad_text_in_each_text_section_is_one_message() -> None:
    at = page_app("mechanisms.py", tab="Text-to-text").run()
    at.text_input(key="mech_t5_label_translation").set_value("   ")
    at.text_input(key="mech_ctrl_Links").set_value("y" * 50_000)
    at.text_input(key="mech_m2m_source").set_value("").run()
    assert_clean(at, errors_expected=True)
    assert len(at.error) == 3 and len(figures(at)) == 0


def test_the_sift_tab_compares_sifts_perturbation_with_a_uniform_one() -> None:
    """SiFT computed on a bundled real model, from a link."""
    from explorer.papers.mechanisms import sift
    from explorer.runtime.loading import load_model

    at = page_app("mechanisms.py", tab="SiFT (DeBERTa)").run()
    assert_clean(at)
    metrics = {m.label: float(m.value) for m in at.metric}
    expected = sift.perturb(load_model(resolve("sentence-bert"), device="cpu"), "The capital of France is Paris.", 0.2)
    assert metrics["SiFT: 1 - cosine of the sentence embedding"] == pytest.approx(expected.kl_sift, abs=1e-3)
    assert "How far each token moved" in figures(at)[0]["layout"]["title"]["text"]
    at.text_input(key="sift_text").set_value(HOSTILE).run()
    assert_clean(at)
    at.text_input(key="sift_text").set_value("  ").run()
    assert any("empty" in e.value for e in at.error)
