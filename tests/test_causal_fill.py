"""Causal fill-in on a tiny random Gemma-3 (fast) and, marked slow, on the real Gemma 3 270M."""

from __future__ import annotations

import json

import pytest

from explorer.core.errors import ExplorerError
from explorer.core.limits import DECODER_FILL_TEXT_CHARS
from explorer.runtime.resolve import resolve
from explorer.tasks.causal.fill import DECODER_MAX_BLANKS, CausalFill, causal_fill
from explorer.tasks.causal.scoring import naive_scores
from tests.tiny_gemma import load_tiny_gemma


@pytest.fixture(scope="module")
def gemma_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("gemma")


@pytest.fixture(scope="module")
def tiny(gemma_dir):
    return load_tiny_gemma(gemma_dir)  # the app's device: CUDA in half precision on a GPU machine


@pytest.fixture(scope="module")
def tiny_cpu(gemma_dir):
    return load_tiny_gemma(gemma_dir, device="cpu")  # float32, for numbers held to 1e-4


def test_both_rankings_hold_the_same_candidates(tiny):
    fill = causal_fill(tiny, "The cat sat on the ___ today.", top_k=50, candidates=50)
    blank = fill.blanks[0]
    assert {c.token_ids for c in blank.by_left} == {c.token_ids for c in blank.by_whole}
    assert [c.left_logprob for c in blank.by_left] == sorted((c.left_logprob for c in blank.by_left), reverse=True)
    assert sum(c.share for c in blank.by_whole) == pytest.approx(1.0)
    assert all(c.left_logprob <= 0 and c.whole_logprob <= 0 for c in blank.by_whole)
    assert fill.filled == "The cat sat on the" + blank.best.text + " today."
    assert fill.notices == ()  # a saved checkpoint, one blank, a short text: nothing to say


def test_whole_text_scores_are_the_naive_ones(tiny_cpu):
    tok = tiny_cpu.tokenizer
    blank = causal_fill(tiny_cpu, "[MASK] is red.", top_k=5, candidates=5).blanks[0]
    prefix, suffix = [tok.eos_token_id], tok(" is red.")["input_ids"]
    naive = naive_scores(tiny_cpu.model, prefix, [c.token_ids for c in blank.by_whole], suffix)
    assert [c.whole_logprob for c in blank.by_whole] == pytest.approx(naive, abs=1e-4)


def test_several_blanks_are_filled_left_to_right(tiny):
    fill = causal_fill(tiny, "The ___ sat on the ___.", top_k=3, candidates=5, answer_tokens=2)
    assert len(fill.blanks) == 2 and "___" not in fill.filled
    assert any("left to right" in n.text for n in fill.notices)
    assert json.loads(json.dumps(fill.to_dict()))["kind"] == "causal-lm"


def test_a_huge_text_is_cut_with_a_notice(tiny):
    fill = causal_fill(tiny, "word " * 10_000 + "___ end.", top_k=2, candidates=2)
    assert [n.kind for n in fill.notices][0] == "truncated"


@pytest.mark.parametrize(("text", "says"), [
    ("no blank here", "No blank"), ("x" * (DECODER_FILL_TEXT_CHARS + 1), f"limit is {DECODER_FILL_TEXT_CHARS:,}"),
    (" ___" * (DECODER_MAX_BLANKS + 1), f"limit is {DECODER_MAX_BLANKS} .a decoder reads the text once per blank")])
def test_bad_text_says_what_to_do(tiny, text, says):
    """The grammar of blanks is explorer.core.userinput's (tests/test_userinput.py); here, the decoder's caps."""
    with pytest.raises(ExplorerError, match=says):
        causal_fill(tiny, text)


@pytest.mark.parametrize("top_k", [0, 10_000, 2.5, True])
def test_bad_numbers_are_refused(tiny, top_k):
    with pytest.raises(ExplorerError, match="top-k"):
        causal_fill(tiny, "a ___ b", top_k=top_k)


@pytest.fixture(scope="module")
def gemma():
    from explorer.runtime import bundled, loading

    bundled.ensure_converted()
    return loading.load_model(resolve("gemma3-270m"), "causal-lm")


@pytest.mark.slow
def test_real_gemma_reads_the_whole_sentence(gemma):
    blank = causal_fill(gemma, "Paris is the ___ of France.").blanks[0]
    assert blank.by_whole[0].text == " capital"


@pytest.mark.slow
def test_real_gemma_eats_popcorn_with_cutlery(gemma):
    blank = causal_fill(gemma, "I ate the popcorn with a ___ .").blanks[0]
    assert {" spoon", " fork"} & {c.text for c in blank.by_whole[:3]}


def test_a_bert_style_tokenizer_starts_with_cls_and_has_no_closing_sep() -> None:
    from explorer.tasks.causal.fill import _ids
    from explorer.training import vocab

    tok = vocab.tokenizer()  # the pretraining lab's: no <bos>, frames "[CLS] x [SEP]"
    assert _ids(tok, "the list", start=True) == tok("the list")["input_ids"][:-1]
    assert _ids(tok, "the list", start=False) == tok("the list", add_special_tokens=False)["input_ids"]


def test_no_answer_is_invisible_on_the_reported_prompt(bundled_decoder) -> None:
    """Every answer puts something visible in this blank: "etc", "…" or "" offered for it fails."""
    from explorer.tasks.causal.fill import causal_fill
    from explorer.tasks.generation import load_decoder

    fill = causal_fill(load_decoder(resolve("gemma3-270m"), device="cpu"), "2, 3, 5, 8, 13, 21, ___.", 5)
    shown = [c.text for blank in fill.blanks for c in (*blank.by_left, *blank.by_whole)]
    assert shown and all(text.strip() and text.isprintable() for text in shown), shown


def _counting_token(seconds: float):
    """A request budget of ``seconds`` on a clock that advances one second each time it is read."""
    import itertools

    from explorer.runtime.cancel import CancelToken, RequestBudget

    ticks = itertools.count()
    return CancelToken(RequestBudget(seconds, 2**40, "test"), clock=lambda: float(next(ticks)), memory=lambda: 0)


def test_a_budget_that_runs_out_shows_what_was_filled_and_says_what_is_missing(tiny_cpu):
    """A stopped request keeps what it filled. Every budget from nothing to enough: either the whole answer,
    or the blanks filled so far (the candidates scored so far ranked) with the rest left as ___ and a notice, or,
    when not one candidate was scored, the stop itself."""
    from explorer.runtime import cancel

    text, options = "The ___ sat on the ___ today.", {"top_k": 3, "candidates": 20}
    full = causal_fill(tiny_cpu, text, **options)
    whole = _counting_token(1e9)
    with cancel.scope(whole):
        assert causal_fill(tiny_cpu, text, **options).filled == full.filled
    reads = int(whole._clock())  # how often the whole run read the clock
    kinds = set()
    for seconds in range(1, reads + 1):
        try:
            with cancel.scope(_counting_token(seconds)):
                got = causal_fill(tiny_cpu, text, **options)
        except cancel.RequestStopped:
            kinds.add("nothing")
            continue
        stopped = [n.text for n in got.notices if n.kind == "stopped"]
        open_blanks = 2 - len(got.blanks)
        assert got.filled.count("___") == open_blanks and (stopped or got.filled == full.filled)
        if open_blanks:
            kinds.add("a blank left open")
            assert any(f"Filled: {len(got.blanks)} of 2 blanks" in s for s in stopped)
        elif any("candidates were scored" in s for s in stopped):
            kinds.add("candidates in part")
            assert len(got.blanks[-1].by_whole) == 3 and len(got.blanks[-1].by_left) == 3
        else:
            kinds.add("whole")
    assert kinds == {"nothing", "a blank left open", "candidates in part", "whole"}, kinds


def _first_cut(model, text: str, options: dict, wanted, *, descending: bool = True) -> CausalFill | None:
    """``causal_fill`` under budgets from just short of enough down to nothing (or up, not ``descending``; a clock
    read counts a second): the first result ``wanted`` accepts (None when no budget gives one)."""
    from explorer.runtime import cancel

    whole = _counting_token(1e9)
    with cancel.scope(whole):
        causal_fill(model, text, **options)
    budgets = range(1, int(whole._clock()))
    for seconds in reversed(budgets) if descending else budgets:
        try:
            with cancel.scope(_counting_token(seconds)):
                got = causal_fill(model, text, **options)
        except cancel.RequestStopped:
            continue
        if wanted(got):
            return got
    return None


def test_the_first_blank_leaves_the_next_its_share_of_the_budget(tiny_cpu):
    """A budget too short for every candidate of both blanks is shared: the first blank ranks what it scored in its
    share and the second is filled too, instead of the first taking it all and the second left as ___."""
    shared = _first_cut(tiny_cpu, "The ___ sat on the ___ today.", {"top_k": 3, "candidates": 20},
                        lambda r: any(n.text.startswith("Blank 1:") and "candidates were scored" in n.text
                                      for n in r.notices))
    assert shared is not None and len(shared.blanks) == 2 and "___" not in shared.filled


def test_a_beam_out_of_time_keeps_the_answers_it_found(tiny_cpu):
    """Answers of several tokens come from a beam, one length per step: when the time runs out (or would, before the
    next step), the shorter answers found so far are ranked and a notice says how long the answers tried were."""
    shorter = _first_cut(tiny_cpu, "The ___ sat on the mat.", {"top_k": 3, "candidates": 10, "answer_tokens": 3},
                         lambda r: any("answers of up to" in n.text and "(3 asked)" in n.text for n in r.notices),
                         descending=False)
    assert shorter is not None and 1 <= max(len(c.token_ids) for c in shorter.blanks[0].by_whole) < 3
