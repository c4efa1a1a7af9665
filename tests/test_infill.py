"""explorer.tasks.infill: T5 sentinels and BART <mask> infilling on tiny models saved locally."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve
from explorer.tasks import infill
from explorer.tasks.causal.fill import DECODER_MAX_BLANKS
from tests.tiny_models import save_tiny


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("infill")
    return {kind: save_tiny(kind, root / kind) for kind in ("t5", "bart", "distilbert-qa")}


class _Scripted(torch.nn.Module):
    """Wraps a real model but "generates" a fixed text: tests the placement logic deterministically."""

    def __init__(self, real, tok, text: str) -> None:
        super().__init__()
        self.real, self.config = real, real.config
        self._ids = tok(text, add_special_tokens=False, return_tensors="pt")["input_ids"]

    def generate(self, **_: object) -> torch.Tensor:
        return self._ids


def _scripted(loaded, text: str) -> SimpleNamespace:
    return SimpleNamespace(model=_Scripted(loaded.model, loaded.tokenizer, text), tokenizer=loaded.tokenizer,
                           key="scripted", name="scripted", device="cpu", untrained=False)


# ---------------------------------------------------------------- prompt parsing


def test_span_pieces_take_t5_sentinels_within_the_cap_of_the_filling_model() -> None:
    """The grammar of blanks is explorer.core.userinput's (tests/test_userinput.py); here, only what
    infilling adds: T5 sentinels count, and a decoder's cap is lower than T5/BART's."""
    assert infill.span_pieces("a ___ b <extra_id_7> c <mask> d [mask]") == ("a ", " b ", " c ", " d ", "")
    many = " ___ " * (infill.SEQ2SEQ_MAX_BLANKS)
    assert len(infill.span_pieces(many)) == infill.SEQ2SEQ_MAX_BLANKS + 1
    with pytest.raises(ExplorerError, match=f"limit is {infill.SEQ2SEQ_MAX_BLANKS} "):
        infill.span_pieces(many + "___")
    with pytest.raises(ExplorerError, match=f"limit is {DECODER_MAX_BLANKS} .a decoder reads"):
        infill.span_pieces(" ___ " * (DECODER_MAX_BLANKS + 1), decoder=True)
    with pytest.raises(ExplorerError, match="limit is 4,000"):
        infill.span_pieces("x " * 3000 + "___")


def test_a_decoder_prompt_over_its_cap_is_refused_before_loading(monkeypatch) -> None:
    from explorer.runtime import loading

    monkeypatch.setattr(loading, "load_model", lambda *a, **k: pytest.fail("loaded"))
    with pytest.raises(ExplorerError, match="a decoder reads the text once per blank"):
        infill.run(resolve("gemma3-270m"), " ___ " * (DECODER_MAX_BLANKS + 1))


def test_parse_sentinels() -> None:
    assert infill.parse_sentinels("<pad> <extra_id_0> for inviting <extra_id_1> last</s>", 2) == (
        ["for inviting", "last"], [])
    got, notes = infill.parse_sentinels("<pad><extra_id_1> b <extra_id_0> a <extra_id_2> extra", 2)
    assert got == ["a", "b"] and notes == []  # order of appearance does not matter; extras ignored
    got, notes = infill.parse_sentinels("<pad><extra_id_0> only", 2)
    assert got == ["only", ""] and notes == ["The model produced no text for blank 2."]
    got, notes = infill.parse_sentinels("<pad> no sentinel at all", 1)
    assert got == [""] and "no sentinel" in notes[0]


@pytest.mark.parametrize("pieces, output, expected", [
    (("The cat ", " on the mat."), "The cat sat on the mat.", ["sat"]),
    (("The cat ", " a mat."), "The cat sat on a mat.", ["sat on"]),  # "a" must not match inside "sat"
    (("", " is the capital."), "Paris is the capital.", ["Paris"]),
    (("I like ", ""), "I like green tea", ["green tea"]),
    (("A ", "", " C"), "A b c C", ["b c", ""]),  # adjacent blanks: the first takes the text
    (("The cat ", " on the mat."), "The   cat\nsat on  the mat.", ["sat"]),  # re-spaced output
    (("The cat ", " on the mat."), "A dog barked.", None),  # rewritten: not alignable
    (("The cat ", " on the mat."), "The cat sat on the mat. And more.", None),
])
def test_align_spans(pieces, output, expected) -> None:
    assert infill.align_spans(pieces, output) == expected


# ---------------------------------------------------------------- infilling with real tiny models


def test_t5_infill_places_spans_back(tiny) -> None:
    loaded = load_model(resolve(str(tiny["t5"])), "seq2seq")
    res = infill.infill(_scripted(loaded, "<pad> <extra_id_0> for inviting <extra_id_1> last </s>"),
                       "Thank you ___ me to your party ___ week.")
    assert res.family == "t5" and res.aligned and res.spans == ("for inviting", "last")
    assert res.filled == "Thank you for inviting me to your party last week."
    assert [s.span for s in res.segments] == [None, 0, None, 1, None]


def test_t5_real_generation_runs_and_uses_sentinels(tiny) -> None:
    loaded = load_model(resolve(str(tiny["t5"])), "seq2seq")
    res = infill.infill(loaded, "The <extra_id_0> walks in ___ park.", max_new_tokens=5)
    assert res.model_input == "The <extra_id_0> walks in <extra_id_1> park."
    assert len(res.spans) == 2 and not res.untrained
    assert res.raw_output.replace(" ", "").startswith("<pad><extra_id_0>")  # decoder forced to open span 1
    untrained = SimpleNamespace(**{k: getattr(loaded, k) for k in ("model", "tokenizer", "key", "name", "device")},
                                untrained=True)
    res = infill.infill(untrained, "The ___ walks.", max_new_tokens=5)
    assert res.untrained and [n.kind for n in res.notices if "suppressed" in n.text] == ["untrained"]
    assert "<pad>" not in res.raw_output.removeprefix("<pad>")  # only the decoder start token


def test_bart_infill_aligns_or_says_it_could_not(tiny) -> None:
    loaded = load_model(resolve(str(tiny["bart"])), "seq2seq")
    good = infill.infill(_scripted(loaded, "<s>The cat sat on the mat today.</s>"), "The cat ___ on the mat ___.")
    assert good.family == "bart" and good.aligned and good.spans == ("sat", "today")
    assert good.model_input == "The cat <mask> on the mat <mask>."
    real = infill.infill(loaded, "The cat ___ on the mat.", max_new_tokens=4)  # random weights: noise
    assert real.family == "bart" and real.raw_output
    if not real.aligned:
        assert real.spans == () and "rewrote" in real.notices[-1].text and real.notices[-1].kind == "missing"
        assert real.to_dict()["notices"][-1] == real.notices[-1].text  # JSON keeps the sentences


def test_infill_refuses_non_seq2seq_and_overlong_prompts(tiny) -> None:
    qa = load_model(resolve(str(tiny["distilbert-qa"])), "question-answering")
    with pytest.raises(ExplorerError, match="T5 \\(sentinels\\), BART \\(<mask>\\) or decoder"):
        infill.infill(qa, "a ___ b")
    bart = load_model(resolve(str(tiny["bart"])), "seq2seq")  # 128 positions
    with pytest.raises(ExplorerError, match="tokens; this model takes at most"):
        infill.infill(bart, "word " * 300 + "___")


def test_run_refuses_a_bad_prompt_before_loading() -> None:
    with pytest.raises(ExplorerError, match="No blank"):
        infill.run(resolve("/no/such/dir"), "no blank here")  # the prompt is checked first: no "does not exist"


def test_run_loads_and_reports_the_device(tiny) -> None:
    from explorer.runtime.loading import best_device

    res = infill.run(resolve(str(tiny["t5"])), "The ___ walks.", max_new_tokens=3)
    assert res.family == "t5" and res.device == best_device() and res.to_dict()["device"] == best_device()


def test_inputs_go_where_the_model_is_whatever_loaded_says(tiny) -> None:
    """A caller's stale ``device`` (a namespace saying "meta" for a model on the CPU or CUDA) is not trusted."""
    loaded = load_model(resolve(str(tiny["t5"])), "seq2seq")
    stale = SimpleNamespace(**{k: getattr(loaded, k) for k in ("model", "tokenizer", "key", "name", "untrained")},
                            device="meta")
    assert infill.infill(stale, "The ___ walks.", max_new_tokens=3).spans == infill.infill(
        loaded, "The ___ walks.", max_new_tokens=3).spans


def test_task_follows_the_catalog_family_or_the_directory_config(tiny, gemma_dir) -> None:
    assert [infill.task(resolve(k)) for k in ("gemma3-270m", "gpt2", "t5-small", "bart-base")] == [
        "causal-lm", "causal-lm", "seq2seq", "seq2seq"]
    assert infill.task(resolve(str(gemma_dir))) == "causal-lm" and infill.task(resolve(str(tiny["t5"]))) == "seq2seq"
    assert infill.task(resolve(str(tiny["bart"]))) == "seq2seq"  # BART has a causal-LM class too: still seq2seq


@pytest.fixture(scope="module")
def gemma_dir(tmp_path_factory):
    from tests.tiny_gemma import save_tiny_gemma

    return save_tiny_gemma(tmp_path_factory.mktemp("gemma") / "gemma")


def test_a_decoder_fills_several_token_spans_ranked_by_the_whole_text(gemma_dir) -> None:
    res = infill.run(resolve(str(gemma_dir)), "Thank you ___ me to your ___ week.", max_new_tokens=2)
    assert res.family == "causal" and len(res.spans) == 2 and res.aligned
    assert res.filled == res.raw_output  # the decoder's filled text is its whole output
    assert res.model_input == "Thank you ___ me to your ___ week."
    ranks = [n.text for n in res.notices if n.text.startswith("Blank ")]
    assert len(ranks) == 2 and all("by the likelihood of the whole text" in r for r in ranks)
    shares = [float(x) for x in __import__("re").findall(r"” (\d+)%", ranks[0])]
    assert shares and sum(shares) <= 100 + len(shares)  # rounded shares of one softmax
    spans = [s for s in res.segments if s.span is not None]
    assert [s.text for s in spans] == list(res.spans)


def test_a_decoder_answer_is_at_most_the_span_cap(gemma_dir, monkeypatch) -> None:
    seen = []
    real = infill.causal_fill
    monkeypatch.setattr(infill, "causal_fill", lambda *a, **k: seen.append(k["answer_tokens"]) or real(*a, **k))
    infill.run(resolve(str(gemma_dir)), "a ___ b", max_new_tokens=64)
    assert seen == [infill.CAUSAL_SPAN_TOKENS]




def test_lab_checkpoint_markers_are_read() -> None:
    # A T5 the pretraining lab trained ends with [SEP]; its uncased BART writes "the cat" for "The cat".
    assert infill.parse_sentinels("[CLS] <extra_id_0> sat [SEP]", 1, ("[SEP]", "[PAD]"))[0] == ["sat"]
    assert infill.align_spans(("The cat ", " on the mat."), "the cat sat on the mat.", ignore_case=True) == ["sat"]
    assert infill.align_spans(("The cat ", " on the mat."), "the cat sat on the mat.") is None


def test_a_seq2seq_generation_out_of_time_keeps_its_output(tiny) -> None:
    """T5 stopped by the request's budget mid-generation: the spans so far are placed and a notice says the output
    was cut, where the stop used to leave nothing."""
    import itertools

    from explorer.runtime import cancel
    from explorer.runtime.cancel import CancelToken, RequestBudget

    def counting(seconds: float) -> CancelToken:
        ticks = itertools.count()
        return CancelToken(RequestBudget(seconds, 2**40, "test"), clock=lambda: float(next(ticks)), memory=lambda: 0)

    loaded = load_model(resolve(str(tiny["t5"])), "seq2seq")
    prompt = "The ___ walks in ___ park."
    whole = counting(1e9)
    with cancel.scope(whole):
        full = infill.infill(loaded, prompt, max_new_tokens=4)
    outcomes = set()
    for seconds in range(1, int(whole._clock())):
        try:
            with cancel.scope(counting(seconds)):
                got = infill.infill(loaded, prompt, max_new_tokens=4)
        except cancel.RequestStopped:
            outcomes.add("nothing")
            continue
        cut = [n for n in got.notices if n.kind == "stopped"]
        if not cut:  # the generation ended before the budget did
            assert got.raw_output == full.raw_output
            continue
        assert "generated before the stop" in cut[0].text
        assert full.raw_output.startswith(got.raw_output.removesuffix("</s>").rstrip())  # the same output, shorter
        outcomes.add("kept")
        break
    assert "kept" in outcomes  # the criterion first runs after a generated token: there is always one to keep
