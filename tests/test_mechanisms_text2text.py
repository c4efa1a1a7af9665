"""explorer.papers.mechanisms.text2text: exact token layouts of T5 tasks, CTRL control codes and M2M-100 languages."""

from __future__ import annotations

import pytest
from transformers.models.ctrl.tokenization_ctrl import CONTROL_CODES

from explorer.core.errors import ExplorerError
from explorer.papers.mechanisms import text2text as tt
from explorer.tokenization import load_tokenizer


@pytest.mark.parametrize("task", list(tt.T5_TASKS))
def test_t5_ids_are_the_shipped_tokenizers(task: str) -> None:
    t = tt.T5_TASKS[task]
    f = tt.t5_frame(task, t.example_input, t.example_target)
    tok = load_tokenizer("t5")
    assert f.source == f"{t.prefix} {t.example_input}"
    assert list(f.encoder.ids) == tok(f.source)["input_ids"]
    assert list(f.labels.ids) == tok(t.example_target)["input_ids"]
    prefix_ids = tok(t.prefix, add_special_tokens=False)["input_ids"]
    assert list(f.encoder.ids[: len(prefix_ids)]) == prefix_ids  # the prefix is there, first
    assert f.encoder.roles.count("prefix") == len(prefix_ids) and f.encoder.roles[len(prefix_ids)] == "text"
    assert f.encoder.tokens[-1] == f.labels.tokens[-1] == "</s>" and f.labels.ids[-1] == tok.eos_token_id == 1
    assert f.encoder.tokens == tuple(tok.convert_ids_to_tokens(list(f.encoder.ids)))


def test_t5_figure_one_layouts() -> None:
    f = tt.t5_frame("translation", "That is good.", "Das ist gut.")
    assert f.encoder.tokens == ("▁translate", "▁English", "▁to", "▁German", ":", "▁That", "▁is", "▁good", ".", "</s>")
    assert f.labels.tokens == ("▁Das", "▁ist", "▁gut", ".", "</s>")
    cola = tt.t5_frame("cola", "The course is jumping well.", "not acceptable")
    assert cola.labels.tokens == ("▁not", "▁acceptable", "</s>")  # a class is a word, not a class index
    stsb = tt.t5_frame("stsb", tt.T5_TASKS["stsb"].example_input, "3.85")
    assert stsb.target == "3.8" and stsb.source.startswith("stsb sentence1: ") and " sentence2: " in stsb.source
    assert "".join(stsb.labels.tokens[:-1]).replace("▁", "") == "3.8"


def test_stsb_label_rounds_to_a_fifth() -> None:
    assert [tt.stsb_label(x) for x in (0.0, 0.09, 0.11, 2.5, 3.85, 5.0)] == ["0.0", "0.0", "0.2", "2.4", "3.8", "5.0"]
    with pytest.raises(ExplorerError, match="between 0 and 5"):
        tt.stsb_label(7.0)
    with pytest.raises(ExplorerError, match="number"):
        tt.t5_frame("stsb", "sentence1: a sentence2: b", "very similar")


def test_ctrl_code_comes_first_with_ctrls_id() -> None:
    f = tt.ctrl_frame("Reviews", "Rating: 5.0")
    gpt2 = load_tokenizer("gpt2")
    assert f.layout.tokens[0] == "Reviews" and f.layout.ids[0] == CONTROL_CODES["Reviews"] == 41671
    assert list(f.layout.ids[1:]) == gpt2(" Rating: 5.0")["input_ids"] and f.stand_in == "gpt2"
    assert f.layout.roles == ("code",) + ("text",) * (len(f.layout.tokens) - 1)
    for code in tt.CTRL_EXAMPLES:
        assert code in CONTROL_CODES  # every example uses a real control code
    with pytest.raises(ExplorerError, match="control codes"):
        tt.ctrl_frame("Cooking", "text")


def test_m2m_layout_source_token_first_forced_target_bos() -> None:
    f = tt.m2m_frame("en", "fr", "Life is like a box of chocolates.", "La vie est comme une boîte de chocolat.")
    assert f.encoder.tokens[0] == "__en__" and f.encoder.tokens[-1] == "</s>"
    assert f.encoder.ids[0] == 128022 and f.encoder.ids[-1] == 2
    assert f.decoder.tokens[:2] == ("</s>", "__fr__") and f.decoder.ids[:2] == (2, 128028)
    assert f.labels.tokens == f.decoder.tokens[1:] + ("</s>",)  # decoder input = labels shifted right
    assert all(i is None for i, r in zip(f.encoder.ids, f.encoder.roles, strict=True) if r == "text")
    assert len(tt.M2M_LANGUAGES) == 100 and tt.m2m_language_id(tt.M2M_LANGUAGES[-1]) == 128112 - 8 - 1


@pytest.mark.parametrize("text", ["", "   ", "x" * 50_000])
def test_bad_text_is_one_message(text: str) -> None:
    for call in (lambda: tt.t5_frame("cola", text, "acceptable"), lambda: tt.ctrl_frame("Links", text),
                 lambda: tt.m2m_frame("en", "de", text, "Hallo")):
        with pytest.raises(ExplorerError):
            call()


def test_html_and_unicode_are_just_text() -> None:
    f = tt.t5_frame("cola", "<script>alert(1)</script> 🙂 مرحبا", "acceptable")
    assert f.source.endswith("<script>alert(1)</script> 🙂 مرحبا")
    with pytest.raises(ExplorerError, match="Unknown T5 task"):
        tt.t5_frame("<b>", "x", "y")
    with pytest.raises(ExplorerError, match="100 languages"):
        tt.m2m_frame("xx", "fr", "a", "b")
