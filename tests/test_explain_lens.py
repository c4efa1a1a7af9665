"""explorer.explain.lens / translator / tuning / background on tiny models: the lens's last layer is the model's
own distribution (decoder, masked LM, encoder-decoder), relative depth, positions, the grid's window, a model
without a head, and the tuned lens trained, saved beside the model, found again and trained in the background."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.explain import background, framer, lens, translator, tuning
from explorer.runtime import loading
from explorer.runtime.resolve import resolve
from explorer.training import corpus
from tests.tiny_gemma import save_tiny_gemma
from tests.tiny_models import save_tiny

TEXT = "\n\n".join(f"The function number {i} returns a list of values from the module, and the loop reads it "
                   f"again in order {i % 7}." for i in range(200)).encode()
QUICK = tuning.TuneSpec(steps=3, windows=2, seq_len=16, heldout=2)


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    root = tmp_path_factory.mktemp("explain-lens")
    out = {k: str(save_tiny(k, root / k)) for k in ("bert", "t5", "bart", "bert-base")}
    out["gemma"] = str(save_tiny_gemma(root / "gemma"))
    return out


def _loaded(paths, kind: str):
    task = {"gemma": "causal-lm", "bert": "masked-lm", "t5": "seq2seq", "bart": "seq2seq"}[kind]
    return loading.load_model(resolve(paths[kind]), task, device="cpu")


@pytest.mark.parametrize(("kind", "task", "text"), [
    ("gemma", "next-token", "The capital of France is"), ("bert", "masked", "The capital of France is [MASK]."),
    ("t5", "span", "The capital of France is ___."), ("bart", "span", "The capital of France is ___.")])
def test_the_last_layer_of_the_lens_is_the_models_own_distribution(paths, kind, task, text) -> None:
    loaded = _loaded(paths, kind)
    frame = framer.build(loaded, task, text, "Paris")
    at = frame.focus or 0
    read = lens.distributions(loaded.model, frame, at)  # (L+1, V)
    inputs = {"input_ids": torch.tensor([frame.rows[0]])}
    if frame.kind == "seq2seq":
        inputs["decoder_input_ids"] = torch.tensor([frame.decoder[0]])
    with torch.no_grad():
        own = loaded.model(**inputs).logits[0, at].float().softmax(-1)
    assert (read[-1].exp() - own).abs().max() < 1e-5


def test_every_layer_has_its_reading_and_relative_depth(paths) -> None:
    result = lens.lens(_loaded(paths, "gemma"), "next-token", "The capital of France is", "Paris", top_k=3)
    assert [x.layer for x in result.layers] == [0, 1, 2, 3] and result.layers[-1].depth == 1.0
    assert result.layers[-1].kl_to_final == 0.0 and all(len(x.top) == 3 for x in result.layers)
    assert all(x.target_rank is not None and x.target_rank >= 1 for x in result.layers)
    assert len(result.grid_tokens) == 4 and len(result.grid_tokens[0]) == len(result.tokens) == 6
    out = result.to_dict()
    assert set(out["layers"][0]) >= {"layer", "top", "target_rank", "target_probability", "entropy", "kl_to_final"}
    assert set(out["layers"][0]["top"][0]) == {"token", "probability"}


def test_the_grid_shows_a_window_of_a_long_text(paths) -> None:
    long = " ".join(["word"] * 40)
    result = lens.lens(_loaded(paths, "gemma"), "next-token", long, "end", grid=True)
    assert len(result.tokens) == lens.GRID_POSITIONS and result.grid_start > 0
    assert any(n.kind == "truncated" for n in result.notices)


def test_positions_are_checked(paths) -> None:
    loaded = _loaded(paths, "gemma")
    assert lens.lens(loaded, "next-token", "The capital is", position=-1, grid=False).position == 3
    with pytest.raises(ExplorerError, match="outside the 4 tokens"):
        lens.lens(loaded, "next-token", "The capital is", position=9, grid=False)


def test_a_model_without_a_head_says_so(paths) -> None:
    loaded = loading.load_model(resolve(paths["bert-base"]), "base", device="cpu")
    with pytest.raises(ExplorerError, match="no language-model head"):
        lens.lens(loaded, "masked", "The capital is [MASK].")
    with pytest.raises(ExplorerError, match="no language-model head .* similarity still work"):
        lens.run(resolve("sentence-bert", None), "A man eats.")


def test_translators_start_as_the_identity_and_train_below_the_logit_lens(paths, tmp_path) -> None:
    loaded = _loaded(paths, "gemma")
    text = corpus.from_bytes(TEXT, "notes.txt")
    report = tuning.train(loaded, QUICK, text, out=str(tmp_path / "lens"))
    assert report.steps == 3 and report.tokens == 3 * 2 * 16 and len(report.logit_kl) == 4
    assert report.logit_kl[-1] == report.tuned_kl[-1] == 0.0
    maps, card = translator.load(paths["gemma"], loaded.key, 3, 32, folder=tmp_path / "lens")  # type: ignore[misc]
    assert card["steps"] == 3 and maps.layers == 3
    untrained = translator.Translators(3, 32)
    h = torch.randn(5, 32)
    assert torch.equal(untrained(1, h), h) and not torch.equal(maps(0, h), h)


def test_a_stopped_training_keeps_what_it_trained(paths, tmp_path) -> None:
    loaded = _loaded(paths, "gemma")
    calls = iter([False, True])
    report = tuning.train(loaded, QUICK, corpus.from_bytes(TEXT, "notes.txt"), should_stop=lambda: next(calls),
                          out=str(tmp_path / "stopped"))
    assert report.steps == 1 and report.asked == 3 and (tmp_path / "stopped" / "tuned-lens.json").is_file()


def test_the_tuned_lens_is_found_beside_the_model_and_read_by_the_lens(paths, tmp_path) -> None:
    loaded = _loaded(paths, "gemma")
    assert translator.find(loaded.path, loaded.key) is None
    with pytest.raises(ExplorerError, match="No tuned lens is trained"):
        lens.lens(loaded, "next-token", "The capital is", tuned=True)
    tuning.train(loaded, QUICK, corpus.from_bytes(TEXT, "notes.txt"))  # default place: beside the weights
    assert translator.find(loaded.path, loaded.key) is not None
    tuned = lens.lens(loaded, "next-token", "The capital is", "Paris", tuned=True, grid=False)
    logit = lens.lens(loaded, "next-token", "The capital is", "Paris", grid=False)
    assert tuned.kind == "tuned" and tuned.layers[-1] == replace(logit.layers[-1])  # the last layer is untouched
    assert tuned.layers[0].kl_to_final != logit.layers[0].kl_to_final


def test_a_background_training_runs_through_the_lab_scheduler(paths, monkeypatch) -> None:
    monkeypatch.setattr(corpus, "bundled", lambda: corpus.from_bytes(TEXT, "notes.txt"))
    ref = resolve(paths["bert"], None)
    job = background.launch(ref, QUICK, device="cpu")
    assert background.launch(ref, QUICK, device="cpu") is job  # one training per model at a time
    deadline = time.monotonic() + 300
    while job.active and time.monotonic() < deadline:
        time.sleep(0.2)
    assert job.state == "done", job.note
    assert job.report is not None and job.report.steps == 3 and translator.find(ref.path, ref.spec) is not None
    assert background.job_for(ref, QUICK, device="cpu") is job


def test_stop_before_a_slot_leaves_the_queue(paths, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_LAB_TRAININGS", "1")
    from explorer.training import scheduler

    holder = scheduler._SLOTS
    assert holder.wait_turn(scheduler.max_trainings, lambda: False)  # the one slot is taken
    try:
        job = background.launch(resolve(paths["t5"], None), QUICK, device="cpu")
        background.stop(job)
        deadline = time.monotonic() + 30
        while job.active and time.monotonic() < deadline:
            time.sleep(0.1)
        assert job.state == "stopped" and "before it started" in (job.note or "")
    finally:
        holder.release()
