"""A served model on a task, through the real engine (llama-cpp-python serving the bundled Gemma GGUF with its
vocabulary cut, :mod:`tests.cut_gguf`): the same choices as the same GGUF converted and run in process (the same
weights, dequantised), agreement with lm-eval's ``local-completions``, and a server without prompt
log-probabilities said in words. On the test's own fake engine (:mod:`tests.hostile_engine`): choices that tie are
decided as lm-eval decides them (``numpy.argmax``: the first) by a local model and a served one alike, with a
notice; a choice the engine cannot score is null with a notice, never Infinity in JSON.

The engine computes with the 4-bit weights themselves, the local model with their float32 dequantisation, so scores
differ by a little: each choice's log-likelihood within :data:`TOLERANCE` of the local one, and the chosen answer
the same wherever the local model's top two choices are further apart than twice that (closer ones are ties
within the engine's tolerance, and the test says which). With the whole vocabulary the engine's echo costs about
half a second a token on 2 cores; with the cut one, a hundredth of that.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

from explorer.cli import main
from explorer.core.errors import ExplorerError
from explorer.evaluation import bundled, perplexity, report, run, taskfile
from explorer.evaluation.scorer import local_scorer, scorer_for
from explorer.evaluation.served import served_scorer
from explorer.evaluation.task import Task
from explorer.runtime.resolve import resolve
from tests.conftest import FIGURES
from tests.hostile_engine import HostileEngine
from tests.tiny_gemma import save_tiny_gemma

SLOW_CPU = 900.0  # seconds a request may take: the whole vocabulary's echo is 8 tokens a second, slower when busy
TOLERANCE = 0.25  # nats per continuation: 4-bit weights in llama.cpp against their float32 dequantisation
PER_PIECE = 0.15  # nats per continuation piece between two clients of one engine (its prefix cache: see below)
EXAMPLES = 3


@pytest.fixture(scope="module")
def local_mc(cut_engine):
    task = bundled.task("multiple_choice").head(EXAMPLES)
    return task, run.score_task(scorer_for(resolve(str(cut_engine.model)), device="cpu"), task)


@pytest.fixture(scope="module")
def served_mc(cut_engine, local_mc):
    """The same examples scored by the engine, once for the two tests that compare it."""
    return run.score_task(served_scorer(replace(cut_engine.endpoint, timeout=SLOW_CPU)), local_mc[0])


def test_served_choices_equal_the_local_ones_on_the_same_gguf(local_mc, served_mc) -> None:
    task, local = local_mc
    served = served_mc
    assert served.family == "served" and served.device == "served" and served.complete
    ties = []
    for ours, theirs in zip(local.examples, served.examples, strict=True):
        assert list(theirs.scores) == pytest.approx(list(ours.scores), abs=TOLERANCE)
        top = sorted(ours.scores, reverse=True)
        if top[0] - top[1] > 2 * TOLERANCE:
            assert served.choice(ours.index) == local.choice(ours.index)
        else:
            ties.append(task.examples[ours.index].line)
    FIGURES.append(f"evaluation: served and local Gemma agree on {EXAMPLES - len(ties)} of {EXAMPLES} choices; "
                   f"ties within {TOLERANCE} nats on lines {ties or 'none'}")


def test_served_cloze_gives_the_greedy_match_and_perplexity(cut_engine) -> None:
    task = bundled.task("cloze").head(6)
    local_model = resolve(str(cut_engine.model))
    local = run.score_task(scorer_for(local_model, device="cpu"), task)
    served = run.score_task(served_scorer(replace(cut_engine.endpoint, timeout=SLOW_CPU)), task)
    for ours, theirs in zip(local.examples, served.examples, strict=True):
        assert theirs.scores[0] == pytest.approx(ours.scores[0], abs=TOLERANCE)
        if abs(ours.scores[0]) > 2 * TOLERANCE:  # a continuation the model is not sure of: greedy agrees
            assert theirs.greedy == ours.greedy
    text = bundled.text()[:300]
    served_ppl = perplexity.perplexity(served_scorer(replace(cut_engine.endpoint, timeout=SLOW_CPU)), text)
    local_ppl = perplexity.perplexity(scorer_for(local_model, device="cpu"), text)
    # the engine tokenizes the text with the GGUF's own tokenizer: a merge may differ from transformers' by a token
    assert abs(served_ppl.tokens - local_ppl.tokens) <= 1 and served_ppl.windows == 1
    assert served_ppl.perplexity == pytest.approx(local_ppl.perplexity, rel=0.1)


def test_a_server_without_prompt_logprobs_is_said_in_words() -> None:
    """An engine that ignores ``echo`` (llama.cpp's llama-server; llama-cpp-python 0.3.36 echoes even when started
    for embeddings, so the test's own engine plays that server)."""
    with HostileEngine("no-echo", spare_probe=False) as engine, pytest.raises(ExplorerError) as err:
        served_scorer(engine.endpoint)
    message = str(err.value)
    assert "cannot score a task" in message and "echo" in message and "llama-server" in message


def test_a_text_past_what_one_request_carries_is_refused_before_any_request(cut_engine) -> None:
    from explorer.evaluation.task import Example, Task

    task = Task("t", "cloze", (Example(0, 4, "x" * 5000, (" y",), 0, (), "cloze"),), "long.jsonl")
    with pytest.raises(ExplorerError, match="Line 4 of long.jsonl: The text to score has 5,002 characters"):
        run.score_task(served_scorer(replace(cut_engine.endpoint, timeout=SLOW_CPU)), task)


@pytest.mark.slow
def test_lm_evals_local_completions_makes_the_same_choices(cut_engine, local_mc, served_mc, tmp_path) -> None:
    """lm-eval's ``local-completions`` against the same engine (the text sent as text, its echo sliced by the
    tokenizer's count of the context's tokens): the same choices, and every score the same up to one amount per
    example (zero when the engine echoes the text's tokens as the tokenizer splits them)."""
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager
    from transformers import AutoTokenizer

    from explorer.evaluation import lmeval

    lines = bundled.path("multiple_choice").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "mc.jsonl").write_text("".join(lines[:EXAMPLES]), encoding="utf-8")
    lmeval.write_task(tmp_path / "tasks", "explorer_served_mc", "choice", tmp_path / "mc.jsonl")
    args = (f"model={cut_engine.endpoint.model},base_url={cut_engine.endpoint.base_url}/completions,"
            f"tokenizer_backend=huggingface,tokenizer={cut_engine.model},tokenized_requests=False,"
            f"num_concurrent=1,max_retries=1,timeout={int(SLOW_CPU)}")
    out = lm_eval.simple_evaluate(model="local-completions", model_args=args, tasks=["explorer_served_mc"],
                                  task_manager=TaskManager(include_path=str(tmp_path / "tasks")), log_samples=True,
                                  verbosity="ERROR")
    served = served_mc
    tokenizer = AutoTokenizer.from_pretrained(cut_engine.model)
    for sample in sorted(out["samples"]["explorer_served_mc"], key=lambda s: s["doc_id"]):
        theirs = [r[0] for r in sample["filtered_resps"]]
        ours = served.examples[sample["doc_id"]].scores
        shifts = [t - o for t, o in zip(theirs, ours, strict=True)]
        # one amount per example, up to where the engine's tokens of context + choice differ from the tokenizer's
        # count of the context's (the text is sent as text, so a merge across the boundary moves a token's share),
        # and up to the engine's own noise: its prefix cache, reused in another order (lm-eval sorts its requests),
        # moves a position's log-probability by up to about a tenth of a nat, so the spread grows with the pieces
        example = local_mc[0].examples[sample["doc_id"]]
        pieces = max(len(tokenizer(example.context + c).input_ids) - len(tokenizer(example.context).input_ids)
                     for c in example.choices)
        assert max(shifts) - min(shifts) <= PER_PIECE * pieces
        assert max(range(len(theirs)), key=theirs.__getitem__) == served.choice(sample["doc_id"])


def _tiny(tmp_path):
    from explorer.runtime.loading import load_model

    return load_model(resolve(str(save_tiny_gemma(tmp_path / "g"))), "causal-lm", device="cpu")


def _task(lines: list[dict]) -> Task:
    return taskfile.parse_task("\n".join(json.dumps(line) for line in lines).encode(), "tied.jsonl")


def test_tied_choices_are_decided_as_lm_eval_decides_them_local_and_served(tmp_path) -> None:
    """The fake engine scores a word by its length, so one-letter choices tie exactly; a local model ties identical
    choices. Both take the first (lm-eval's ``np.argmax``), so an answer that is not first is wrong, and say so."""
    with HostileEngine() as engine:
        tied = _task([{"context": f"Q{i}:", "choices": ["A", "B", "C"], "answer": i} for i in range(3)])
        served = run.score_task(served_scorer(engine.endpoint), tied)
    assert all(len(set(e.scores)) == 1 for e in served.examples)  # every choice tied
    rep = report.build(tied, [served])
    assert [served.choice(i) for i in range(3)] == [0, 0, 0] and rep.summaries[0].acc.correct == 1
    assert any("tie exactly on 3 of 3" in n.text and "lm-eval" in n.text for n in rep.notices)
    tiny = local_scorer(_tiny(tmp_path))
    same = _task([{"context": "The sky is", "choices": ["blue", "blue"], "answer": 1}])
    local = run.score_task(tiny, same)
    assert local.examples[0].scores[0] == local.examples[0].scores[1]
    assert local.choice(0) == 0 and local.correct(0, 1) is False  # the same rule as the served run's


def test_a_choice_the_engine_cannot_score_is_null_with_a_notice_never_infinity(tmp_path, capsys) -> None:
    """Every echoed token -1e308 (a legal number): two of them sum to -inf. The examples are left out of the
    accuracy, said by a notice, and the JSON holds null where it would have held -Infinity and Infinity."""
    path = tmp_path / "floor.jsonl"
    path.write_text("\n".join(json.dumps({"context": f"Q{i}:", "choices": ["a b", "c d"], "answer": 0})
                              for i in range(3)), encoding="utf-8")
    with HostileEngine("logprob-floor") as engine:
        code = main(["evaluate", "--base-url", engine.base_url, "--model", "hostile", "--task", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert all(e["scores"] == [None, None] and e["choice"] is None and e["correct"] is None for e in doc["examples"])
    assert doc["perplexity"] is None and doc["accuracy"] is None and doc["interval"] == [0.0, 1.0]
    assert any("could not score a choice of 3 example(s)" in n for n in doc["notices"])
