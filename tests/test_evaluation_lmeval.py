"""Agreement with lm-evaluation-harness 0.4: the same JSONL run as a local lm-eval task (``dataset_path: json``, no
hub download) on the same weights gives the same per-example choices, accuracy and rolling perplexity.

Kept few and small: a tiny Gemma for the request-level agreement (tokenization, empty contexts, trailing spaces,
greedy flags), and a handful of examples on the bundled Gemma 3 270M for the task-level one.
"""

from __future__ import annotations

import json
import math
import os

import pytest

from explorer.evaluation import bundled, lmeval, perplexity, run
from explorer.evaluation.scorer import local_scorer, scorer_for
from explorer.evaluation.task import CHOICE
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve
from tests.tiny_gemma import save_tiny_gemma

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")  # lm-eval's data loading reads the local JSONL only

lm_eval = pytest.importorskip("lm_eval")
from lm_eval.api.instance import Instance  # noqa: E402
from lm_eval.models.huggingface import HFLM  # noqa: E402
from lm_eval.tasks import TaskManager  # noqa: E402

PAIRS = [("The cat sat on the", " mat"), ("The cat sat on the", " hat and then slept"), ("Numbers: 1, 2, ", "3"),
         ("", "Hello world"), ("Once upon a", " time")]


def _requests(kind: str, args: list[tuple]) -> list[Instance]:
    return [Instance(kind, {}, a, i) for i, a in enumerate(args)]


def _evaluate(lm: HFLM, folder, name: str, kind: str, data) -> list[dict]:
    lmeval.write_task(folder, name, kind, data)
    out = lm_eval.simple_evaluate(model=lm, tasks=[name], task_manager=TaskManager(include_path=str(folder)),
                                  log_samples=True, verbosity="ERROR")
    return sorted(out["samples"][name], key=lambda s: s["doc_id"])


def test_requests_on_a_tiny_gemma_equal_lm_evals_hf_model(tmp_path) -> None:
    path = save_tiny_gemma(tmp_path / "tiny")
    lm = HFLM(pretrained=str(path), device="cpu", batch_size=2, dtype="float32")
    theirs = lm.loglikelihood(_requests("loglikelihood", PAIRS), disable_tqdm=True)
    scorer = local_scorer(load_model(resolve(str(path)), "causal-lm", device="cpu"))
    ours = [s for ctx, cont in PAIRS for s in scorer.score([(ctx, (cont,))])[0]]
    assert [s.logprob for s in ours] == pytest.approx([t[0] for t in theirs], abs=1e-4)
    assert [s.greedy for s in ours] == [t[1] for t in theirs]


@pytest.fixture(scope="module")
def gemma_lm(bundled_decoder):
    from explorer.runtime import bundled as runtime_bundled

    return HFLM(pretrained=str(runtime_bundled.converted_dir()), device="cpu", batch_size=4, dtype="float32")


@pytest.mark.slow
def test_gemma_multiple_choice_equals_lm_evals_local_task(gemma_lm, tmp_path) -> None:
    """Five bundled questions as a local lm-eval task on the converted Gemma: same choices, acc and acc_norm."""
    task = bundled.task("multiple_choice").head(5)
    data = tmp_path / "mc.jsonl"
    lines = bundled.path("multiple_choice").read_text(encoding="utf-8").splitlines(keepends=True)
    data.write_text("".join(lines[:5]), encoding="utf-8")
    samples = _evaluate(gemma_lm, tmp_path / "tasks", "explorer_mc", CHOICE, data)
    ours = run.score_task(scorer_for(resolve("gemma3-270m"), device="cpu"), task)
    for sample, got in zip(samples, ours.examples, strict=True):
        lls = [r[0] for r in sample["filtered_resps"]]
        assert list(got.scores) == pytest.approx(lls, abs=2e-4)
        assert ours.choice(got.index) == max(range(len(lls)), key=lls.__getitem__)
        assert float(ours.correct(got.index, task.examples[got.index].answer)) == sample["acc"]
        norm = ours.norm_choice(got.index, task.examples[got.index].choices) == task.examples[got.index].answer
        assert float(norm) == sample["acc_norm"]


@pytest.mark.slow
def test_gemma_rolling_perplexity_is_lm_evals_within_one_percent(gemma_lm, tmp_path) -> None:
    """The bundled text (about 250 tokens) in windows of 96 tokens: lm-eval's rolling log-likelihood and ours.

    lm-eval's ``hf`` model encodes the text with the tokenizer's specials, so with Gemma it would also score
    ``<bos>`` after its own ``<bos>``; ``add_bos_token=False`` makes it read the text as we do."""
    text = bundled.text()
    data = tmp_path / "text.jsonl"
    data.write_text(json.dumps({"text": text}) + "\n", encoding="utf-8")
    gemma_lm._max_length, gemma_lm.add_bos_token = 96, False
    try:
        sample = _evaluate(gemma_lm, tmp_path / "tasks", "explorer_rolling", lmeval.ROLLING, data)[0]
    finally:
        gemma_lm._max_length, gemma_lm.add_bos_token = None, None
    theirs = sample["filtered_resps"][0]
    ours = perplexity.perplexity(scorer_for(resolve("gemma3-270m"), device="cpu"), text, window=96)
    assert ours.windows > 2 and ours.complete
    assert ours.logprob == pytest.approx(float(theirs), rel=0.01)
    loglikelihood, words = sample["word_perplexity"]
    assert ours.word_perplexity == pytest.approx(math.exp(-loglikelihood / words), rel=0.01)
