"""explorer.explain.target: the text checked and the target as token ids, every refusal one sentence before work."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.core.limits import EXPLAIN_TARGET_CHARS, EXPLAIN_TEXT_CHARS
from explorer.core.userinput import MARKER
from explorer.explain import target
from explorer.tokenization import load_tokenizer


@pytest.fixture(scope="module")
def gpt2():
    return load_tokenizer("gpt2")


@pytest.fixture(scope="module")
def bert():
    return load_tokenizer("bert-base-uncased")


def test_a_word_after_the_text_gets_its_space_and_says_so(gpt2) -> None:
    aim = target.resolve(gpt2, "Paris", "The capital of France is")
    assert aim.scored == " Paris" and aim.ids == tuple(gpt2(" Paris", add_special_tokens=False)["input_ids"])
    assert any("scored as ' Paris'" in n.text for n in aim.notices())


def test_a_target_of_several_tokens_is_their_sum_and_says_so(gpt2) -> None:
    aim = target.resolve(gpt2, "Tegucigalpa", "The capital was")
    assert len(aim.ids) > 1
    assert any("sum of their log-probabilities" in n.text for n in aim.notices())


def test_a_target_spelled_as_a_vocabulary_token_is_that_token(gpt2) -> None:
    aim = target.resolve(gpt2, "ĠParis", "The capital of France is")
    assert aim.ids == (gpt2.get_vocab()["ĠParis"],) and len(aim.ids) == 1


@pytest.mark.parametrize(("typed", "said"), [
    ("", "empty"), ("   ", "empty"), ("x" * (EXPLAIN_TARGET_CHARS + 1), "at most"), ("a\nb", "control character"),
    ("[SEP]", "special token"), ("😀", "not in this model's vocabulary"), (7, "must be text"),
])
def test_bad_targets_are_refused_in_one_sentence(bert, typed, said) -> None:
    with pytest.raises(ExplorerError, match=said):
        target.resolve(bert, typed, "The capital of France is")


def test_a_target_holding_a_special_token_is_refused(gpt2) -> None:
    with pytest.raises(ExplorerError, match="special token"):
        target.resolve(gpt2, "Paris<|endoftext|>", "The capital is")


@pytest.mark.parametrize(("text", "said"), [
    ("", "empty"), ("  \n ", "empty"), ("x" * (EXPLAIN_TEXT_CHARS + 1), f"at most {EXPLAIN_TEXT_CHARS:,}"),
    ("Hello [CLS] world", "special tokens typed as text"), (None, "must be a string"),
])
def test_bad_texts_are_refused_before_any_model(bert, text, said) -> None:
    with pytest.raises(ExplorerError, match=said):
        target.check_text(text, bert)


def test_the_blank_is_not_a_special_token_typed_as_text(bert) -> None:
    assert target.check_text("Paris is the [MASK] of France.", bert, MARKER)
    with pytest.raises(ExplorerError, match="special tokens typed"):
        target.check_text("Paris is the [MASK] of France.", bert)  # a next-token text has no blank


def test_the_models_own_prediction_says_so(gpt2) -> None:
    own = target.own(gpt2, gpt2.get_vocab()["ĠParis"])
    assert own.own and own.scored == " Paris" and "own top prediction" in own.notices()[0].text


@pytest.mark.parametrize(("text", "aim", "foil", "said"), [
    ("___", "Paris", None, "leaves no token to attribute"),
    (" [MASK] ", None, None, "leaves no token to attribute"),
    ("The capital of France is", "Paris", " Paris ", "The foil is the target itself"),
    ("The capital of France is", "Par\nis", None, "control character"),
    ("The capital of France is", "Paris", "Ro\nme", "control character"),
])
def test_one_question_check_for_every_path(text, aim, foil, said) -> None:
    """The local and the served path both call it before any model or request (the served path once scored a
    foil equal to the target as all zeros, and a target holding a line break)."""
    with pytest.raises(ExplorerError, match=said):
        target.check_question(text, aim, foil)


def test_the_served_path_refuses_what_the_local_path_refuses_before_any_request() -> None:
    from explorer.explain import served
    from explorer.serving.endpoints import Endpoint

    nowhere = Endpoint("nowhere", "http://127.0.0.1:9/v1")  # a request would say the connection was refused
    for aim, foil, said in (("Paris", "Paris", "The foil is the target itself"), ("Par\nis", None, "control"),
                            ("Paris", None, "leaves no token")):
        with pytest.raises(ExplorerError, match=said):
            served.attribute(nowhere, "___" if said.startswith("leaves") else "The capital of France is", aim,
                             foil=foil)
