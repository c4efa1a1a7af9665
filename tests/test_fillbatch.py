"""explorer.tasks.fillbatch: many prompts at once equal the one-prompt path and transformers' pipeline; order, lines,
limits."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve
from explorer.tasks import fillmask as fm
from explorer.tasks.fillmask import batch as fb
from explorer.tasks.fillmask import masked
from explorer.tasks.fillmask import prompt as fillmask_prompt
from tests.peaked_models import save_peaked
from tests.tiny_gemma import load_tiny_gemma, save_tiny_gemma

KINDS = ("bert", "roberta", "distilbert", "electra-generator", "albert")
# Lengths deliberately unsorted, with one and two masks, so sorting and restoring order is exercised.
PROMPTS = [
    "The capital of France is [MASK], a city known for its museums, its food and its long history.",
    "Hi [MASK].",
    "The [MASK] sat on the ___.",
    "A [MASK] is a kind of bird that lives near the sea.",
    "She [MASK] to the store yesterday and bought [MASK] apples for the whole family.",
    "Ice is [MASK].",
    "[MASK] [MASK]",
]


@pytest.fixture(autouse=True)
def _on_the_cpu(monkeypatch):
    """These tests are about float32 results: pin the CPU even where a GPU would be picked (bf16 there)."""
    from explorer.runtime import loading

    monkeypatch.setattr(loading, "best_device", lambda: "cpu")


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("fb")
    return {k: save_peaked(k, root / k) for k in KINDS}


def _lm(dirs, kind: str):
    return load_model(resolve(str(dirs[kind])), "masked-lm")


def _same(a, b, tol: float = 1e-5) -> None:
    """Two columns agree: same tokens, words, positions and text; probabilities within ``tol``."""
    assert (a.text, a.filled, a.n_tokens, a.notices) == (b.text, b.filled, b.n_tokens, b.notices)
    assert [(m.index, m.position) for m in a.masks] == [(m.index, m.position) for m in b.masks]
    for ma, mb in zip(a.masks, b.masks, strict=True):
        assert [(p.token_id, p.token, p.word) for p in ma.predictions] == [
            (p.token_id, p.token, p.word) for p in mb.predictions]
        assert [p.score for p in ma.predictions] == pytest.approx([p.score for p in mb.predictions], abs=tol)


@pytest.mark.parametrize("kind", KINDS)
def test_batched_equals_one_prompt_at_a_time(dirs, kind: str) -> None:
    lm = _lm(dirs, kind)
    batched = fb.fill_batch(lm, PROMPTS, top_k=5, max_batch=3)
    assert len(batched) == len(PROMPTS)
    for prompt, got in zip(PROMPTS, batched, strict=True):
        _same(got, fm.fill_one(lm, prompt, 5))


@pytest.mark.parametrize("kind", KINDS)
def test_batched_top_k_equals_transformers_pipeline(dirs, kind: str) -> None:
    from transformers import pipeline

    lm = _lm(dirs, kind)
    k = 5
    pipe = pipeline("fill-mask", model=lm.model, tokenizer=lm.tokenizer, top_k=k)
    ref = pipe([fillmask_prompt.model_prompt(p, lm.tokenizer, kind) for p in PROMPTS], batch_size=4)
    ours = fb.fill_batch(lm, PROMPTS, top_k=k, max_batch=3)  # other batches than the pipeline's: order restored
    for fill, expected in zip(ours, ref, strict=True):
        expected = [expected] if isinstance(expected[0], dict) else expected  # one mask: not nested
        assert len(fill.masks) == len(expected)
        for mask, want in zip(fill.masks, expected, strict=True):
            assert [p.token_id for p in mask.predictions] == [e["token"] for e in want]
            assert [p.token for p in mask.predictions] == [e["token_str"] for e in want]
            assert [p.score for p in mask.predictions] == pytest.approx([e["score"] for e in want], abs=1e-5)
    assert max(m.predictions[0].score for f in ours for m in f.masks) > 0.1  # peaked (uniform: 3e-5): a real top-k test


def test_order_is_restored_whatever_the_batching(dirs) -> None:
    lm = _lm(dirs, "bert")
    shuffled = PROMPTS[:]
    random.Random(3).shuffle(shuffled)
    reference = fb.fill_batch(lm, shuffled, max_batch=1)
    for max_batch, budget in ((2, 10_000), (64, 40), (64, 1), (64, fb.TOKEN_BUDGET)):
        got = fb.fill_batch(lm, shuffled, max_batch=max_batch, token_budget=budget)
        for a, b in zip(got, reference, strict=True):
            _same(a, b)
    assert [f.text for f in reference] == [fm.fill_one(lm, p).text for p in shuffled]  # each answer in its place
    assert [len(f.masks) for f in reference] == [len(fm.MARKER.findall(p)) for p in shuffled]


@pytest.mark.parametrize("kind", ("bert", "roberta"))
def test_mask_only_head_equals_the_full_head_on_a_padded_batch(dirs, kind: str) -> None:
    model = _lm(dirs, kind).model
    ids = torch.randint(5, 1000, (3, 9))  # (B, T)
    attention = torch.tensor([[1] * 9, [1] * 6 + [0] * 3, [1] * 4 + [0] * 5])  # right-padded rows
    rows, cols = torch.tensor([0, 0, 1, 2]), torch.tensor([2, 8, 5, 1])
    fast = fb.batch_logits(model, ids, attention, rows, cols)
    full = fb.batch_logits(model, ids, attention, rows, cols, mask_only=False)
    assert fast.shape == full.shape == (4, model.config.vocab_size)
    assert torch.allclose(fast, full, atol=1e-4, rtol=1e-5)
    assert torch.allclose(fast.float().softmax(-1).sum(-1), torch.ones(4), atol=1e-5)  # probabilities sum to 1


def test_a_head_that_cannot_be_split_takes_the_full_forward(dirs, monkeypatch) -> None:
    lm = _lm(dirs, "distilbert")
    fast = fb.fill_batch(lm, PROMPTS, 5)
    monkeypatch.setattr(masked, "mlm_head", lambda model: None)  # as for a class mlm_head does not know
    slow = fb.fill_batch(lm, PROMPTS, 5)
    for a, b in zip(fast, slow, strict=True):
        _same(a, b)
    for a, b in zip(fast, fb.fill_batch(lm, PROMPTS, 5, mask_only=False), strict=True):
        _same(a, b)


def test_probabilities_are_a_distribution(dirs) -> None:
    for fill in fb.fill_batch(_lm(dirs, "roberta"), PROMPTS, fm.MAX_TOP_K):
        for mask in fill.masks:
            scores = [p.score for p in mask.predictions]
            assert len(scores) == fm.MAX_TOP_K and scores == sorted(scores, reverse=True)
            assert scores[-1] >= 0 and sum(scores) <= 1 + 1e-5


def test_lines_with_zero_one_and_two_masks(dirs) -> None:
    text = "\n".join(["The [MASK] sat on the ___.", "", "No blank on this line.", "   ", "Ice is [MASK].",
                      "The cat <extra_id_0> the mat."])
    out = fb.fill_mask_many([str(dirs["bert"]), str(dirs["roberta"])], text, 3)
    assert [p.line for p in out.prompts] == [1, 3, 5, 6]  # blank lines skipped, numbers as in the text
    assert [p.result.n_masks if p.result else None for p in out.prompts] == [2, None, 1, None]
    assert "no mask" in out.prompts[1].error and "sentinel" in out.prompts[3].error
    as_list = out.to_list()
    assert as_list[1] == {"line": 3, "prompt": "No blank on this line.", "error": out.prompts[1].error}
    assert as_list[0]["line"] == 1 and [len(m["masks"]) for m in as_list[0]["models"]] == [2, 2]
    single = fm.fill_mask([str(dirs["bert"]), str(dirs["roberta"])], "Ice is [MASK].", 3)
    for a, b in zip(out.prompts[2].result.models, single.models, strict=True):
        _same(a, b)
    summary = out.summary()
    assert summary[1] == {"line": 3, "prompt": "No blank on this line.", "note": out.prompts[1].error}
    assert list(summary[0]) == ["line", "prompt", "note", "bert", "roberta"] and summary[0]["note"] == ""
    assert " | " in summary[0]["bert"]  # two masks in one cell
    rows = out.rows()
    assert len(rows) == (2 + 1) * 2 * 3 and {r["line"] for r in rows} == {1, 5}


def test_a_model_that_fails_fails_once_and_the_others_answer(dirs) -> None:
    out = fb.fill_mask_many([str(dirs["bert"]), "/no/such/dir"], "A [MASK].\nB [MASK].", 2)
    assert all(len(p.result.models) == 1 and p.result.errors[0][0] == "/no/such/dir" for p in out.prompts)
    assert len(out.model_errors()) == 1 and "does not exist" in out.model_errors()[0][1]


def test_masks_too_far_apart_fail_only_their_prompt(dirs) -> None:
    far = "[MASK] " + "word " * 300 + "[MASK]"
    out = fb.fill_mask_many([str(dirs["bert"])], f"Near [MASK].\n{far}", 2)
    assert len(out.prompts[0].result.models) == 1 and not out.prompts[0].result.errors
    assert not out.prompts[1].result.models and "tokens apart" in out.prompts[1].result.errors[0][1]
    long = "word " * 500 + "The [MASK] end."  # truncated around the mask, as alone
    got = fb.fill_batch(_lm(dirs, "bert"), [long, "Short [MASK]."])
    _same(got[0], fm.fill_one(_lm(dirs, "bert"), long))
    assert [n.kind for n in got[0].notices] == ["truncated"] and not got[1].notices


def test_the_decoder_column_is_looped_with_the_same_answers(tmp_path) -> None:
    path = save_tiny_gemma(tmp_path / "gemma")

    def loader(spec, task, **kw):
        return load_tiny_gemma(path)

    prompts = ["Paris is the [MASK] of France.", "The cat sat on the [MASK]."]
    out = fb.fill_mask_many(["gemma3-270m"], "\n".join(prompts), 3, loader=loader)
    for prompt, got in zip(prompts, out.prompts, strict=True):
        alone = fm.fill_mask(["gemma3-270m"], prompt, 3, loader=loader).models[0]
        assert got.result.models[0].masks == alone.masks and got.result.models[0].filled == alone.filled


@pytest.mark.parametrize(("text", "message"), [
    ("", "no prompts"), ("\n \n\t\n", "no prompts"), (None, "must be text"),
])
def test_unusable_text_is_one_message(dirs, text, message: str) -> None:
    with pytest.raises(ExplorerError, match=message):
        fb.fill_mask_many([str(dirs["bert"])], text)


def test_binary_files_are_refused_and_typed_control_characters_blanked(dirs) -> None:
    with pytest.raises(ExplorerError, match="looks like a binary file"):
        fb.refuse_binary("a [MASK]\x00b", "--text-file")
    out = fb.fill_mask_many([str(dirs["bert"])], "a [MASK]\x00b\n\x00\x1b", 2)  # typed on the page: as one prompt
    assert out.prompts[0].result.prompt == "a [MASK] b" and "no mask" in out.prompts[1].error


def test_too_many_prompts_are_cut_with_a_notice() -> None:
    text = "\n".join(f"Line {i} has a [MASK]." if i % 2 else "" for i in range(1, 200))
    lines, notices = fb.prompt_lines(text, limit=fb.MAX_PROMPTS)
    assert len(lines) == fb.MAX_PROMPTS and lines[-1][0] == 2 * fb.MAX_PROMPTS - 1
    assert "100 prompts were given; only the first 64 ran (up to line 127)" in notices[0].text
    assert fb.prompt_lines("One [MASK].", limit=1) == ([(1, "One [MASK].")], ())
    assert fb.page_prompt_limit("cpu") == fb.MAX_PROMPTS < fb.page_prompt_limit("cuda")


def test_long_refused_lines_are_quoted_short(dirs) -> None:
    out = fb.fill_mask_many([str(dirs["bert"])], "x" * 500 + "\nFine [MASK].", 2)
    assert len(out.prompts[0].prompt) == 83 and out.prompts[0].error and out.prompts[1].result.models


def test_plan_batches_covers_every_prompt_within_the_bounds() -> None:
    rng = random.Random(0)
    for _ in range(50):
        lengths = [rng.randint(1, 300) for _ in range(rng.randint(0, 150))]
        max_batch, budget = rng.randint(1, 70), rng.randint(1, 5_000)
        batches = fb.plan_batches(lengths, max_batch, budget)
        assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
        for b in batches:
            assert len(b) <= max_batch and (len(b) == 1 or len(b) * max(lengths[i] for i in b) <= budget)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (the CPU paths are tested above)")
def test_on_cuda_equals_the_pipeline_and_the_cpu(dirs) -> None:
    """On the GPU in the dtype loading picks there (bfloat16): the same top-3 as the pipeline on the same
    model and as float32 on the CPU; probabilities within bfloat16's rounding."""
    from transformers import pipeline

    gpu, cpu = (load_model(resolve(str(dirs["bert"])), "masked-lm", device=d) for d in ("cuda", "cpu"))
    assert next(gpu.model.parameters()).device.type == "cuda"
    ours, on_cpu = fb.fill_batch(gpu, PROMPTS, 3, max_batch=3), fb.fill_batch(cpu, PROMPTS, 3)
    ref = pipeline("fill-mask", model=gpu.model, tokenizer=gpu.tokenizer, top_k=3)(
        [fillmask_prompt.model_prompt(p, gpu.tokenizer, "bert") for p in PROMPTS], batch_size=4)
    for fill, want, base in zip(ours, ref, on_cpu, strict=True):
        want = [want] if isinstance(want[0], dict) else want
        assert fill.device == "cuda"
        for mask, expected, m_cpu in zip(fill.masks, want, base.masks, strict=True):
            ids = [p.token_id for p in mask.predictions]
            assert ids == [e["token"] for e in expected] == [p.token_id for p in m_cpu.predictions]
            assert [p.score for p in mask.predictions] == pytest.approx([e["score"] for e in expected], abs=2e-2)
            assert [p.score for p in mask.predictions] == pytest.approx([p.score for p in m_cpu.predictions], abs=2e-2)


def test_a_model_streamed_from_disk_answers_the_same(dirs, tmp_path) -> None:
    import dataclasses

    from explorer.runtime.offload import load_offloaded

    whole = _lm(dirs, "bert")
    spread = load_offloaded(dirs["bert"], "masked-lm", tmp_path / "offload", max_memory={"cpu": 600_000})
    assert "disk" in spread.placement()  # the budget pushed part of it to disk (accelerate's hooks stream it)
    streamed = dataclasses.replace(whole, model=spread.model)
    for a, b in zip(fb.fill_batch(streamed, PROMPTS, 5, max_batch=3), fb.fill_batch(whole, PROMPTS, 5), strict=True):
        _same(a, b)
