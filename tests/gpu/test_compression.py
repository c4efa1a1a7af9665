"""The compression lab on each device: FastBERT's exits train and answer the same way, Michel et al.'s head
ranking agrees with the CPU's, and fp16 (GPU only) casts a copy. On CI the CPU half runs; ``make test-gpu``
runs the CUDA half on a GPU machine."""

from __future__ import annotations

import pytest
import torch

from explorer.compression import heads, methods, study
from explorer.core.errors import ExplorerError
from explorer.training import downstream, exits, lossfamilies, recipes
from tests.gpu.conftest import DEVICES

QUICK = exits.ExitSpec(steps=6, distill_steps=6, batch=8, seq_len=32, test_examples=16)


@pytest.mark.parametrize("device", DEVICES)
def test_exits_train_and_adaptive_inference_matches_decide_on_the_device(device: str) -> None:
    recipe = recipes.get("mlm")
    model = lossfamilies.get(recipe.loss).build(recipe, "tiny", 0, device)
    ex, report = exits.train(model, QUICK)
    assert {p.device.type for p in ex.parameters()} == {torch.device(device).type}
    test = exits.test_examples(QUICK)
    probs = exits.probabilities(ex, test)
    d = exits.decide(probs, 0.9)
    for n, e in enumerate(test[:8]):
        if abs(float(exits.uncertainty(probs[0, n])) - 0.9) < 1e-3:
            continue
        ids, mask, _ = downstream.tensors([e], torch.device(device))
        assert exits.adaptive(ex, ids, mask, 0.9)[:2] == (int(d.predictions[n]), int(d.layers[n]))
    assert len(report.layer_accuracy) == 2


@pytest.mark.parametrize("device", DEVICES)
def test_early_exit_study_runs_on_the_device(device: str, lab_exits) -> None:
    result = study.run("lab/mlm-tiny-20steps-seed0", ["exit-0.8"], device=device, models_dir=str(lab_exits),
                       repeats=1)
    assert result.device.startswith(device) and result.rows[0].latency_ms > 0
    assert 1.0 <= result.rows[0].quality.extra["mean_layers"] <= 2.0


@pytest.mark.parametrize("device", DEVICES)
def test_michel_head_ranking_agrees_with_the_cpu(device: str, tmp_path) -> None:
    from tests.tiny_gemma import load_tiny_gemma

    here = load_tiny_gemma(tmp_path / "g", device=device)
    ids = here.tokenizer(heads.importance_text(), return_tensors="pt")["input_ids"][:, :64]
    ranked = heads.gradient_scores(here.model.float(), ids.to(device))
    cpu = load_tiny_gemma(tmp_path / "g", device="cpu")
    expected = heads.gradient_scores(cpu.model, ids)
    got = {(s.layer, s.head): s.score for s in ranked}
    assert all(got[(s.layer, s.head)] == pytest.approx(s.score, abs=1e-3) for s in expected)


@pytest.mark.parametrize("device", DEVICES)
def test_fp16_casts_a_copy_on_a_gpu_and_is_refused_on_the_cpu(device: str) -> None:
    from transformers import BertConfig, BertModel

    model = BertModel(BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                                 vocab_size=100)).eval().to(device)
    fp16 = methods.parse("fp16")
    if device == "cpu":
        with pytest.raises(ExplorerError, match="GPU only"):
            methods.apply(model, fp16, device)
        return
    out = methods.apply(model, fp16, device)
    assert {p.dtype for p in out.parameters()} == {torch.float16}
    assert {p.dtype for p in model.parameters()} == {torch.float32}  # the original is untouched
    ids = torch.tensor([[1, 5, 7, 2]], device=device)
    with torch.no_grad():
        a, b = model(input_ids=ids).last_hidden_state, out(input_ids=ids).last_hidden_state.float()
    assert torch.nn.functional.cosine_similarity(a, b, dim=-1).min() > 0.99
