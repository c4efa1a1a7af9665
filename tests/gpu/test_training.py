"""The pretraining lab on each device: the same trainer, the same seed, the held-out loss agrees before training
and falls after it. On CI the CPU half runs; on a GPU machine (``make test-gpu``) the CUDA half measures the
same runs on the accelerator."""

from __future__ import annotations

import pytest
import torch

from explorer.training import checkpoint, trainer
from tests.gpu.conftest import DEVICES

TINY = {"steps": 20, "batch_tokens": 256, "seq_len": 32, "eval_windows": 8, "eval_every": 20}
OBJECTIVES = ("mlm", "electra", "t5", "gpt")  # one per kind of model: encoder, pair, encoder-decoder, decoder


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("objective", OBJECTIVES)
def test_a_run_trains_on_the_device_and_starts_where_the_cpu_starts(objective: str, device: str) -> None:
    run = trainer.start(trainer.Plan(objective, device=device, **TINY))
    assert {p.device.type for p in run.model.parameters()} == {torch.device(device).type}
    trainer.advance(run)
    first, last = run.evals[0], run.evals[-1]
    assert last["loss"] < first["loss"]
    if device != "cpu":  # the same seed builds the same weights on the CPU first: step 0 agrees across devices
        # The language-model loss, not the objective's: ELECTRA's replaced tokens are drawn by a generator of
        # the device (electra.sample), so its discriminator term differs by device (42.910 vs 42.896 on an H200).
        cpu = trainer.start(trainer.Plan(objective, device="cpu", **TINY))
        assert trainer.evaluate(cpu)["lm_loss"] == pytest.approx(first["lm_loss"], abs=1e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_a_run_trained_on_the_device_saves_a_checkpoint_the_cpu_loads(device: str, tmp_path) -> None:
    run = trainer.advance(trainer.start(trainer.Plan("mlm", device=device, **{**TINY, "steps": 3})))
    path = checkpoint.save(run, tmp_path / "lab-run")
    card = checkpoint.load_card(path)
    assert card["device"] == device and card["steps"] == 3
