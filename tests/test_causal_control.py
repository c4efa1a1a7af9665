"""explorer.tasks.causal.control: a decoder never offers special or control tokens for a blank, nor an empty answer.

A tiny random Gemma-3 whose output layer is rigged so that control tokens (added <start_of_image>,
<h1>, [multimodal], special <start_of_turn>, <unused0>, the end-of-text token) and a whitespace
token get by far the highest logits: without the filter they would be every answer. Then three
reported prompts on the real bundled Gemma 3 270M (one module-scoped load).
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest
import torch
from tokenizers import AddedToken

from explorer.runtime.resolve import resolve
from explorer.tasks import infill
from explorer.tasks.causal.control import control_ids, is_blank, looks_like_control
from explorer.tasks.causal.fill import _visible, causal_fill
from explorer.tasks.causal.scoring import PrefixScorer

CONTROLS_ADDED = ["<start_of_image>", "<h1>", "</td>", "[multimodal]"]  # added, not marked special (as in Gemma 3)
CONTROLS_SPECIAL = ["<start_of_turn>", "<unused0>"]
PLAIN_ADDED = ["\n\n\n"]  # an added token that is text: kept as a token, never an answer alone
PEAK = 60.0


@pytest.fixture(scope="module")
def rigged() -> SimpleNamespace:
    from transformers import Gemma3ForCausalLM

    from explorer.architecture.build import BUILD_LOCK
    from explorer.tokenization import load_tokenizer
    from tests.tiny_gemma import tiny_gemma_config

    tok = copy.deepcopy(load_tokenizer("gpt2"))  # the loaded one is shared by the process: never mutate it
    tok.add_tokens([AddedToken(t, special=False) for t in CONTROLS_ADDED + PLAIN_ADDED])
    tok.add_tokens([AddedToken(t, special=True) for t in CONTROLS_SPECIAL], special_tokens=True)
    with BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Gemma3ForCausalLM(tiny_gemma_config(len(tok), tok.eos_token_id)).eval()
    peaked = [tok.convert_tokens_to_ids(t) for t in CONTROLS_ADDED + CONTROLS_SPECIAL]
    peaked += [tok.eos_token_id, tok.convert_tokens_to_ids("Ġ")]  # end of text, and a bare space
    bias = torch.zeros(len(tok))
    bias[peaked] = PEAK
    model.lm_head.register_forward_hook(lambda _m, _i, out: out + bias)  # (..., V): these ids win every position
    return SimpleNamespace(model=model, tokenizer=tok, key="rigged", name="rigged", untrained=True, peaked=peaked,
                           device="cpu")


def _answers(fill) -> list[str]:
    return [c.text for b in fill.blanks for c in (*b.by_left, *b.by_whole)]


def test_the_rule_covers_special_added_and_control_looking_tokens(rigged) -> None:
    tok = rigged.tokenizer
    ids = control_ids(tok, len(tok) + 3)
    for t in CONTROLS_ADDED + CONTROLS_SPECIAL:
        assert tok.convert_tokens_to_ids(t) in ids, t
    assert tok.eos_token_id in ids
    assert tok.convert_tokens_to_ids(PLAIN_ADDED[0]) not in ids  # text, not a control
    assert {len(tok), len(tok) + 1, len(tok) + 2} <= ids  # output rows without a token
    assert tok.convert_tokens_to_ids("Ġthe") not in ids


def test_the_rig_works_without_the_filter(rigged) -> None:
    """The peaked ids are what the raw model would answer: only the filter keeps them out."""
    ids = rigged.tokenizer("The cat", add_special_tokens=False)["input_ids"]
    top = PrefixScorer(rigged.model, [rigged.tokenizer.eos_token_id, *ids]).next_logprobs.topk(8).indices.tolist()
    assert set(top) == set(rigged.peaked)


@pytest.mark.parametrize("answer_tokens", [1, 3])
def test_no_control_token_and_no_empty_answer(rigged, answer_tokens: int) -> None:
    fill = causal_fill(rigged, "The [MASK] sat on the [MASK].", top_k=5, answer_tokens=answer_tokens)
    answers = _answers(fill)
    assert answers and not any(is_blank(a) for a in answers)
    for a in answers:
        assert not any(t in a for t in CONTROLS_ADDED + CONTROLS_SPECIAL + ["<|endoftext|>"]), a
    banned = control_ids(rigged.tokenizer)
    assert not any(i in banned for b in fill.blanks for c in b.by_whole for i in c.token_ids)


def test_infill_blanks_are_never_filled_with_nothing(rigged) -> None:
    out = infill.infill(rigged, "un___able [MASK] <mask> ___", max_new_tokens=2)
    assert len(out.spans) == 4 and all(s.strip() for s in out.spans), out.spans
    assert "<" not in out.filled.replace("<mask>", "")


def test_empty_only_when_nothing_else_and_then_said(rigged) -> None:
    tok = rigged.tokenizer
    space, nl = tok.convert_tokens_to_ids("Ġ"), tok.convert_tokens_to_ids(PLAIN_ADDED[0])
    blanks = [((space,), -1.0, -2.0), ((nl,), -1.5, None), ((space, nl), -2.0, -3.0)]  # (ids, left, whole text)
    kept, note = _visible(tok, blanks, 1)
    assert kept == blanks and note is not None and "Blank 2" in note.text and "nothing" in note.text
    word = tok.convert_tokens_to_ids("Ġcat")
    kept, note = _visible(tok, [((space,), -1.0, -2.0), ((word,), -1.2, -2.5)], 0)
    assert kept == [((word,), -1.2, -2.5)] and note is None


@pytest.mark.parametrize("text", ["<start_of_image>", "<h1>", "</blockquote>", "[multimodal]", "<|im_start|>"])
def test_control_looking(text: str) -> None:
    assert looks_like_control(text)


@pytest.mark.parametrize("text", ["<", "a<b>", "<b> ", "[MASK] x", "<<", "[1]", "\n"])
def test_not_control_looking(text: str) -> None:
    assert not looks_like_control(text)


# ---- the real bundled decoder: the reported prompts ---------------------------------------------------
@pytest.fixture(scope="module")
def gemma():
    from explorer.runtime import bundled, loading

    bundled.ensure_converted()
    return loading.load_model(resolve(bundled.KEY), "causal-lm")


def _clean(text: str) -> bool:
    return "<start_of_image>" not in text and "<h1>" not in text and "<unused" not in text and "<eos>" not in text


def test_real_five_blanks_with_four_token_answers(gemma) -> None:
    fill = causal_fill(gemma, "[MASK] was born in [MASK] in the year [MASK] and died in [MASK] at the age of "
                              "[MASK].", answer_tokens=4)
    assert _clean(fill.filled) and not any(is_blank(b.best.text) for b in fill.blanks), fill.filled


def test_real_adjacent_blanks_are_each_filled(gemma) -> None:
    out = infill.infill(gemma, "un___able [MASK] <mask> ___")
    assert _clean(out.filled) and all(s.strip() for s in out.spans), out.spans


def test_real_lone_blank_is_a_word_not_markup(gemma) -> None:
    out = infill.infill(gemma, "___")
    assert _clean(out.filled) and out.spans[0].strip() and not looks_like_control(out.spans[0].strip())
