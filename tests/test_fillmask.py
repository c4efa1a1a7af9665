"""explorer.tasks.fillmask: equality with pipeline("fill-mask"), mask-only head, bad input, side by side, threads."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest
import torch

from explorer.core import limits
from explorer.core.errors import ExplorerError
from explorer.runtime import modelcache
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve
from explorer.runtime.tokenizers import roberta_tokenizer
from explorer.tasks import fillmask as fm
from explorer.tasks.fillmask import masked
from explorer.tasks.fillmask import prompt as fillmask_prompt
from explorer.tasks.fillmask import run as fillmask_run
from explorer.tokenization import load_tokenizer
from tests.tiny_models import save_tiny

MLM_KINDS = ("bert", "roberta", "distilbert", "electra-generator", "albert")


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("fm")
    return {k: save_tiny(k, root / k) for k in (*MLM_KINDS, "electra-discriminator")}


def _lm(dirs, kind: str, device: str | None = None):
    """The tiny model on ``device`` (None: the app's choice, CUDA in half precision on a GPU machine)."""
    task = "electra-discriminator" if kind == "electra-discriminator" else "masked-lm"
    return load_model(resolve(str(dirs[kind])), task, device=device)


@pytest.mark.parametrize("kind", MLM_KINDS)
def test_equals_transformers_pipeline(dirs, kind: str) -> None:
    from transformers import pipeline

    lm = _lm(dirs, kind, "cpu")  # float32 like the pipeline below (tests/gpu/test_fillmask.py: per device and dtype)
    prompt = "The capital of France is [MASK] and the [MASK] is nice."
    ours = fm.fill_one(lm, prompt, top_k=5)
    ref = pipeline("fill-mask", model=str(dirs[kind]), top_k=5)(prompt.replace("[MASK]", lm.tokenizer.mask_token))
    assert len(ours.masks) == 2
    for mask, expected in zip(ours.masks, ref, strict=True):
        assert [p.token_id for p in mask.predictions] == [e["token"] for e in expected]
        assert [p.token for p in mask.predictions] == [e["token_str"] for e in expected]
        assert [p.score for p in mask.predictions] == pytest.approx([e["score"] for e in expected], abs=1e-6)


@pytest.mark.parametrize("kind", MLM_KINDS)
def test_mask_only_head_equals_full_forward(dirs, kind: str) -> None:
    model = _lm(dirs, kind, "cpu").model  # float32: the tolerance is float32's
    assert masked.mlm_head(model) is not None  # the fast path is really taken for these classes
    ids = torch.randint(5, 1000, (1, 12))
    pos = torch.tensor([3, 7])
    with torch.inference_mode():
        full = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0, pos]
    assert torch.allclose(masked.mask_logits(model, ids, pos), full, atol=1e-5)


def test_generic_markers_are_translated(dirs) -> None:
    bert, roberta = _lm(dirs, "bert"), _lm(dirs, "roberta")
    a, b, c = (fm.fill_one(bert, f"A {m} is a kind of bird.") for m in ("[MASK]", "<mask>", "___"))
    assert a.masks == b.masks == c.masks and "[MASK]" in a.text
    r = fm.fill_one(roberta, "A [MASK] is a kind of bird.")
    assert "<mask>" in r.text and "[MASK]" not in r.text


def test_whole_word_joins_pieces() -> None:
    specials = {"[CLS]", "[SEP]"}
    tok = load_tokenizer("bert-base-uncased")
    assert masked.whole_word(tok, ["[CLS]", "quick", "##ly", "[SEP]"], 2, "##", specials) == "quickly"
    assert masked.whole_word(tok, ["[CLS]", "un", "##believ", "##able", "[SEP]"], 2, "##", specials) == "unbelievable"
    rob = roberta_tokenizer()
    assert masked.whole_word(rob, ["<s>", "Ġquick", "ly", ".", "</s>"], 2, "Ġ", {"<s>", "</s>"}) == "quickly"
    assert masked.whole_word(rob, ["<s>", "Ġquick", "ly", ".", "</s>"], 1, "Ġ", {"<s>", "</s>"}) == "quickly"


@pytest.mark.parametrize(("prompt", "message"), [
    ("", "empty"), ("   \n\t ", "empty"), ("No blank here.", "no mask"),
    ("The cat <extra_id_0> the mat.", "span sentinel"), ("[MASK] " * 21, "at most 20"),
    ("x" * (limits.FILL_MASK_PROMPT_CHARS + 1), "limit"), ("word " * 10_000, "no mask"),
])
def test_bad_prompts_are_clear(dirs, prompt: str, message: str) -> None:
    with pytest.raises(ExplorerError, match=message):
        fm.fill_mask([str(dirs["bert"])], prompt)


@pytest.mark.parametrize("prompt", [
    "Emoji 🤖 are [MASK] 🎉.", "هذا [MASK] جميل جدا", "<script>alert(1)</script> The [MASK] <b>bold</b>",
    "Control\x00chars\x1b[31m and a [MASK]\x07.",
])
def test_odd_but_valid_prompts_answer(dirs, prompt: str) -> None:
    result = fm.fill_mask([str(dirs["bert"]), str(dirs["roberta"])], prompt, top_k=3)
    assert not result.errors and all(len(m.masks[0].predictions) == 3 for m in result.models)
    assert "\x00" not in result.prompt and "\x1b" not in result.prompt


def test_long_prompt_is_truncated_around_the_mask(dirs) -> None:
    prompt = "word " * 5_000 + "The capital of France is [MASK]. " + "tail " * 5_000  # ~50,000 characters
    assert len(prompt) > 50_000
    out = fm.fill_one(_lm(dirs, "bert"), prompt)
    assert out.n_tokens == 128 and [n.kind for n in out.notices] == ["truncated"] and "[MASK]" in out.text
    assert "reads at most 126" in out.to_dict()["notice"]  # JSON keeps one sentence under "notice"
    assert "france" in out.text  # the window is centred on the mask, not the start


def test_masks_too_far_apart(dirs) -> None:
    with pytest.raises(ExplorerError, match="tokens apart"):
        fm.fill_one(_lm(dirs, "bert"), "[MASK] " + "word " * 300 + "[MASK]")


def test_model_without_mask_token() -> None:
    t5 = load_tokenizer("t5")
    with pytest.raises(ExplorerError, match="has no mask token"):
        fillmask_prompt.model_prompt("A [MASK].", t5, "T5")


def test_side_by_side_keeps_going_and_dedups(dirs) -> None:
    res = fm.fill_mask([str(dirs["bert"]), "/no/such/dir", str(dirs["bert"]), " "], "The [MASK] sat.", top_k=2)
    assert [m.model for m in res.models] == [str(dirs["bert"])]
    assert res.errors[0][0] == "/no/such/dir" and "does not exist" in res.errors[0][1]
    assert res.to_dict()["models"][0]["masks"][0]["predictions"][0]["score"] > 0
    with pytest.raises(ExplorerError, match="at least one model"):
        fm.fill_mask([" "], "The [MASK] sat.")
    with pytest.raises(ExplorerError, match="top-k"):
        fm.fill_one(_lm(dirs, "bert"), "The [MASK] sat.", top_k=0)


def test_untrained_label_is_carried(dirs) -> None:
    def loader(ref, task, **kw):
        return dataclasses.replace(load_model(ref, task), untrained=True)

    res = fm.fill_mask([str(dirs["bert"])], "The [MASK] sat.", loader=loader)
    assert res.models[0].untrained and res.to_dict()["models"][0]["untrained"] is True


def test_concurrent_predictions_are_unmixed(dirs) -> None:
    jobs = [(k, p) for k in ("bert", "roberta", "distilbert") for p in ("The [MASK] sat.", "I like [MASK] a lot.")]
    expected = {(k, p): fm.fill_one(_lm(dirs, k), p, 4).masks for k, p in jobs}
    modelcache.clear_cache()  # the threads also race to load the same models (each must load once)
    got: dict = {}

    def run(k: str, p: str) -> None:
        for _ in range(3):
            got.setdefault((k, p), []).append(fm.fill_mask([str(dirs[k])], p, 4).models[0].masks)

    threads = [threading.Thread(target=run, args=job) for job in jobs]
    [t.start() for t in threads]
    [t.join() for t in threads]
    for job in jobs:
        assert got[job] == [expected[job]] * 3
    assert len(modelcache.cache_info()) == 3
    from transformers import PreTrainedModel  # parallel loads must not leave tying switched off

    assert PreTrainedModel.tie_weights.__name__ == "tie_weights"


def test_whole_word_stops_at_neighbouring_mask() -> None:
    tok = load_tokenizer("bert-base-uncased")
    specials = set(tok.all_special_tokens)
    assert masked.whole_word(tok, ["[CLS]", "[MASK]", "##ly", "[SEP]"], 2, "##", specials) == "##ly"


def test_catalog_keys_resolve_in_models_dir(dirs, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(dirs["bert"], tmp_path / "bert-base")
    shutil.copytree(dirs["bert"], tmp_path / "FacebookAI--roberta-base")  # wrong architecture for roberta-base
    res = fm.fill_mask(["bert-base", "roberta-base"], "The [MASK] sat.", 3, models_dir=str(tmp_path))
    assert [(m.model, m.untrained) for m in res.models] == [("bert-base", False)]
    assert res.models[0].name == "BERT-base" and "holds a 'bert' model but 'roberta-base'" in res.errors[0][1]


def test_allow_random_runs_only_models_without_weights(dirs, monkeypatch) -> None:
    monkeypatch.delenv("EXPLORER_MODELS_DIR", raising=False)
    asked = []

    def loader(ref, task, **kw):  # fill_mask resolves each model once and hands the loader the ref
        asked.append((ref.spec, ref.random_weights))
        return load_model(resolve(str(dirs["bert"])), task)

    fm.fill_mask(["bert-base", str(dirs["bert"])], "The [MASK] sat.", allow_random=True, loader=loader)
    assert asked == [("bert-base", True), (str(dirs["bert"]), False)]
    asked.clear()
    fm.fill_mask(["bert-base"], "The [MASK] sat.", loader=loader)
    assert asked == [("bert-base", False)]  # without allow_random the missing weights are an error later


def test_each_model_kind_has_a_filler() -> None:
    assert {resolve(k, None).task("masked-lm") for k in ("bert-base", "gemma3-270m")} == set(fillmask_run.FILLERS)


def test_max_tokens_takes_the_roberta_offset_off(dirs) -> None:
    assert masked.max_tokens(_lm(dirs, "roberta")) == 128  # 130 positions, padding index 1
    assert masked.max_tokens(_lm(dirs, "bert")) == 128


def test_presets_include_the_course_probing_sentence():
    from explorer.tasks.fillmask import PRESETS

    assert "Stanford University is located in [MASK]." in PRESETS["course probes"]
