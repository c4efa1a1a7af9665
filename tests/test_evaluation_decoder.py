"""A decoder's continuation scores (context run once, KV cache shared by the choices) equal a direct transformers
computation on the same weights: every choice run from scratch, full logits, log-softmax, summed."""

from __future__ import annotations

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.evaluation import bundled, run
from explorer.evaluation.decoder import DecoderScorer, encode_pair
from explorer.evaluation.scorer import local_scorer, scorer_for
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve
from tests.tiny_gemma import save_tiny_gemma

GROUPS = [
    ("The cat sat on the", (" mat", " hat and then slept", " dog")),
    ("Numbers: 1, 2, 3, ", ("4", "four, five and six", "3")),  # trailing space moved to the continuation
    ("", ("Hello world", "Goodbye")),  # empty context: <bos> (else <eos>) alone
]


def direct(model: torch.nn.Module, ctx: list[int], cont: list[int]) -> tuple[float, bool]:
    """log p(cont | ctx) and the greedy match from one full forward of ctx + cont (lm-eval's arithmetic)."""
    x = torch.tensor([ctx + cont])
    with torch.inference_mode():
        lp = torch.log_softmax(model(input_ids=x).logits[0].float(), dim=-1)  # (T, V)
    rows = lp[len(ctx) - 1: len(ctx) - 1 + len(cont)]  # position t predicts token t + 1
    picked = rows.gather(1, torch.tensor(cont)[:, None])[:, 0]
    return float(picked.sum()), bool((rows.argmax(1) == torch.tensor(cont)).all())


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = save_tiny_gemma(tmp_path_factory.mktemp("tiny-gemma"))
    return load_model(resolve(str(path)), "causal-lm", device="cpu")


def test_tiny_decoder_scores_equal_the_direct_computation(tiny) -> None:
    scorer = local_scorer(tiny)
    assert isinstance(scorer, DecoderScorer)
    for (context, conts), scores in zip(GROUPS, scorer.score(GROUPS), strict=True):
        for cont, got in zip(conts, scores, strict=True):
            ctx_ids, cont_ids = encode_pair(tiny.tokenizer, context, cont)
            want, greedy = direct(tiny.model, ctx_ids, cont_ids)
            assert got.logprob == pytest.approx(want, abs=1e-4) and got.greedy == greedy
            assert got.tokens == len(cont_ids)


def test_splitting_the_choices_over_several_forwards_changes_nothing(tiny) -> None:
    whole = DecoderScorer(tiny).score(GROUPS)
    for split in (DecoderScorer(tiny, max_rows=1), DecoderScorer(tiny, examples=1), DecoderScorer(tiny, 2, 2)):
        got = split.score(GROUPS)
        assert [s.logprob for g in got for s in g] == pytest.approx([s.logprob for g in whole for s in g], abs=1e-5)
        assert [s.greedy for g in got for s in g] == [s.greedy for g in whole for s in g]


def test_left_padded_contexts_of_a_model_with_absolute_positions_equal_each_alone(tmp_path) -> None:
    """GPT-2 learns a vector per absolute position: a padded context must still start at position 0."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from explorer.architecture.build import BUILD_LOCK
    from explorer.tokenization import load_tokenizer

    tok = load_tokenizer("gpt2")
    with BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=64))
    model.eval().save_pretrained(tmp_path / "gpt2")
    tok.save_pretrained(tmp_path / "gpt2")
    loaded = load_model(resolve(str(tmp_path / "gpt2")), "causal-lm", device="cpu")
    for (context, conts), scores in zip(GROUPS, local_scorer(loaded).score(GROUPS), strict=True):
        for cont, got in zip(conts, scores, strict=True):
            want, greedy = direct(loaded.model, *encode_pair(loaded.tokenizer, context, cont))
            assert got.logprob == pytest.approx(want, abs=1e-4) and got.greedy == greedy


def test_a_context_past_the_window_is_cut_from_the_left_as_lm_eval_does(tiny) -> None:
    scorer = DecoderScorer(tiny)
    scorer.window = 8
    context = "one two three four five six seven eight nine ten eleven twelve"
    got = scorer.example(context, [" thirteen"])[0]
    ctx_ids, cont_ids = encode_pair(tiny.tokenizer, context, " thirteen")
    keep = (ctx_ids + cont_ids)[-(8 + 1):]  # lm-eval: (context + continuation)[-(max_length + 1):]
    want, _ = direct(tiny.model, keep[: len(keep) - len(cont_ids)], cont_ids)
    assert got.logprob == pytest.approx(want, abs=1e-4)


def test_a_continuation_without_a_token_of_its_own_is_refused_with_its_line(tiny) -> None:
    from explorer.evaluation.task import Example, Task

    task = Task("t", "cloze", (Example(0, 7, "hel", ("lo",), 0, (), "cloze"),), "t.jsonl")  # "hello": one token
    with pytest.raises(ExplorerError, match="Line 7 of t.jsonl: A continuation adds no token"):
        run.score_task(local_scorer(tiny), task)


@pytest.mark.slow
def test_gemma_choices_equal_a_direct_transformers_computation(bundled_decoder) -> None:
    """The bundled Gemma 3 270M on a few bundled questions: same scores (float32 rounding) and the same choices."""
    scorer = scorer_for(resolve("gemma3-270m"), device="cpu")
    task = bundled.task("multiple_choice").head(3)
    result = run.score_task(scorer, task)
    for ex, got in zip(task.examples, result.examples, strict=True):
        want = [direct(scorer.loaded.model, *encode_pair(scorer.loaded.tokenizer, ex.context, c))[0]
                for c in ex.continuations()]
        assert list(got.scores) == pytest.approx(want, abs=2e-4)
        assert result.choice(ex.index) == int(torch.tensor(want).argmax())


def test_parts_stop_when_their_time_together_passes_the_budget_and_say_so(tiny) -> None:
    """The page's way: parts of a few examples, each its own request; past the budget the run keeps what it has."""
    from explorer.evaluation.task import Example, Task

    task = Task("t", "cloze", tuple(Example(i, i + 1, f"Count {i}:", (" one",), 0, (), "cloze") for i in range(7)),
                "t.jsonl")
    scorer = local_scorer(tiny)
    whole = run.score_in_parts(lambda a, b: run.score_task(scorer, task, first=a, last=b), 7, 3, budget=1e9)
    assert whole.complete and [e.index for e in whole.examples] == list(range(7)) and not whole.notices
    assert [e.scores for e in whole.examples] == [e.scores for e in run.score_task(scorer, task).examples]
    seen: list[float] = []
    cut = run.score_in_parts(lambda a, b: run.score_task(scorer, task, first=a, last=b), 7, 3, budget=0.0,
                             progress=lambda f, _: seen.append(f))
    assert len(cut.examples) == 3 and not cut.complete and cut.stopped and seen == [3 / 7]
    assert "scored 3 of 7 examples" in cut.notices[-1].text


def test_branched_sequences_are_used_where_they_fit_and_equal_the_direct_computation(tmp_path) -> None:
    """A Gemma-3 whose sliding window is wider than the examples: every choice of an example in one branched
    sequence (checked once against the KV-cache path, then used), equal to each choice run alone."""
    from transformers import Gemma3ForCausalLM

    from explorer.architecture.build import BUILD_LOCK
    from explorer.evaluation import decoder
    from explorer.tokenization import load_tokenizer
    from tests.tiny_gemma import tiny_gemma_config

    tok = load_tokenizer("gpt2")
    config = tiny_gemma_config(len(tok), tok.eos_token_id)
    config.sliding_window = 64
    with BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(1)
        Gemma3ForCausalLM(config).eval().save_pretrained(tmp_path / "wide")
    tok.save_pretrained(tmp_path / "wide")
    loaded = load_model(resolve(str(tmp_path / "wide")), "causal-lm", device="cpu")
    scores = local_scorer(loaded).score(GROUPS)
    assert decoder._BRANCHES_AGREE[loaded.model] is True  # the branched path was checked, and taken
    for (context, conts), got in zip(GROUPS, scores, strict=True):
        for cont, score in zip(conts, got, strict=True):
            want, greedy = direct(loaded.model, *encode_pair(loaded.tokenizer, context, cont))
            assert score.logprob == pytest.approx(want, abs=1e-4) and score.greedy == greedy
