"""explorer.papers.mechanisms.distillation: every loss equals a hand computation in numpy from the same tensors."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from explorer.core.errors import ExplorerError
from explorer.papers.mechanisms import distillation as d

TEXT = "Paris is the capital of France, and Rome is the capital of Italy."


@functools.cache
def _triple(temperature: float = 2.0) -> d.TripleLoss:
    return d.triple_loss(TEXT, seed=0, temperature=temperature, device="cpu")  # float32 numbers: the CPU


@functools.cache
def _layers() -> d.LayerwiseLoss:
    return d.layerwise_loss(TEXT, seed=0, device="cpu")


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float64)
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def _kl_times_t2(teacher: np.ndarray, student: np.ndarray, t: float) -> float:
    log_p, log_q = _log_softmax(teacher / t), _log_softmax(student / t)
    return float((np.exp(log_p) * (log_p - log_q)).sum(-1).mean() * t * t)


def test_masked_input_is_seeded_and_shared() -> None:
    a, b = d.masked_input(TEXT, seed=0), d.masked_input(TEXT, seed=0)
    assert a.tokens == b.tokens and a.masked and all(a.tokens[i] == "[MASK]" for i in a.masked)
    assert a.tokens[0] == "[CLS]" and a.tokens[-1] == "[SEP]" and 0 not in a.masked
    from explorer.tokenization import load_tokenizer

    original = load_tokenizer("bert-base-uncased")(TEXT)["input_ids"]
    np.testing.assert_array_equal(a.labels[list(a.masked)], np.asarray(original)[list(a.masked)])
    assert (a.labels == -100).sum() == len(a.tokens) - len(a.masked) and len(a.masked) == round(0.15 * 15)
    assert d.masked_input(TEXT, seed=1).masked != a.masked


@pytest.mark.parametrize("temperature", [1.0, 2.0])
def test_soft_loss_is_t2_times_kl(temperature: float) -> None:
    r = _triple(temperature)
    assert r.ce == pytest.approx(_kl_times_t2(r.teacher_logits, r.student_logits, temperature), abs=1e-5)


def test_mlm_and_cosine_losses_by_hand() -> None:
    r = _triple()
    masked = list(r.inp.masked)
    log_q = _log_softmax(r.student_logits[masked])
    mlm = -log_q[np.arange(len(masked)), r.inp.labels[masked]].mean()
    assert r.mlm == pytest.approx(mlm, abs=1e-5)
    s, t = r.student_hidden.astype(np.float64), r.teacher_hidden.astype(np.float64)
    cos = (s * t).sum(-1) / np.linalg.norm(s, axis=-1) / np.linalg.norm(t, axis=-1)
    assert r.cos == pytest.approx((1 - cos).mean(), abs=1e-5)


def test_weights_and_total_are_the_released_ones() -> None:
    r = _triple()
    assert d.DISTILBERT_WEIGHTS == {"ce": 5.0, "mlm": 2.0, "cos": 1.0} and d.DISTILBERT_TEMPERATURE == 2.0
    assert r.total == pytest.approx(5.0 * r.ce + 2.0 * r.mlm + 1.0 * r.cos, abs=1e-5)
    assert min(r.ce, r.mlm, r.cos, r.total) >= 0
    assert set(r.to_dict()) >= {"losses", "weights", "weighted", "total", "temperature"}


def test_temperature_softens_the_targets() -> None:
    r1, r2 = _triple(1.0), _triple(2.0)
    np.testing.assert_array_equal(r1.teacher_logits, r2.teacher_logits)  # same input, same models
    assert r2.teacher_entropy > r1.teacher_entropy  # flatter soft targets at T = 2
    assert r2.ce / 4 < r1.ce  # the KL itself shrinks; the T² factor keeps the gradients' scale
    assert r1.ce != pytest.approx(r2.ce, abs=1e-9)
    losses, kl, entropy = r2.curve((1.0, 2.0, 4.0))
    assert losses[0] == pytest.approx(r1.ce, abs=1e-6) and losses[1] == pytest.approx(r2.ce, abs=1e-6)
    np.testing.assert_allclose(kl * np.array([1.0, 4.0, 16.0]), losses, rtol=1e-6)
    assert np.all(np.diff(kl) < 0)
    assert np.all(np.diff(entropy) > 0)


def test_layer_map_is_m_times_n_over_m() -> None:
    assert d.layer_map(12, 4) == (0, 3, 6, 9, 12)
    assert d.layer_map(12, 6) == (0, 2, 4, 6, 8, 10, 12)
    for n, m in [(12, 4), (24, 6), (12, 12), (12, 3)]:
        assert d.layer_map(n, m) == tuple(k * n // m for k in range(m + 1))
    with pytest.raises(ValueError):
        d.layer_map(4, 12)


def test_tinybert_losses_by_hand() -> None:
    r = _layers()
    assert r.mapping == (0, 3, 6, 9, 12) and r.n_teacher == 12 and len(r.attention) == len(r.hidden) == 4
    assert r.student_hidden.shape[-1] == 312 and r.teacher_hidden.shape[-1] == 768 and r.w_h.shape == (312, 768)
    for i in range(4):
        assert r.attention[i] == pytest.approx(((r.student_scores[i] - r.teacher_scores[i]) ** 2).mean(), abs=1e-5)
        proj = r.student_hidden[i + 1].astype(np.float64) @ r.w_h
        assert r.hidden[i] == pytest.approx(((proj - r.teacher_hidden[i + 1]) ** 2).mean(), abs=1e-5)
    emb = r.student_hidden[0].astype(np.float64) @ r.w_e
    assert r.embedding == pytest.approx(((emb - r.teacher_hidden[0]) ** 2).mean(), abs=1e-5)
    p = np.exp(_log_softmax(r.teacher_logits))
    assert r.prediction == pytest.approx(-(p * _log_softmax(r.student_logits)).sum(-1).mean(), abs=1e-5)
    assert r.score_check < 1e-5  # the scores we compare are the ones both models softmax
    assert min(*r.attention, *r.hidden, r.embedding, r.prediction) >= 0
    assert r.total == pytest.approx(sum(r.attention) + sum(r.hidden) + r.embedding + r.prediction)


def test_sizes_are_the_published_shapes() -> None:
    s = d.model_sizes()
    assert 109e6 < s.teacher < 110e6 and 66e6 < s.distilbert < 67.5e6 and 14e6 < s.tinybert < 15e6


@pytest.mark.parametrize("text", ["", "   ", "x" * 50_000])
def test_bad_text_is_one_message(text: str) -> None:
    with pytest.raises(ExplorerError):
        d.triple_loss(text)


def test_bad_temperature_is_a_message() -> None:
    with pytest.raises(ExplorerError, match="Temperature"):
        d.triple_loss(TEXT, temperature=0.0)


def test_the_default_placement_is_the_cpu_in_float32_with_the_same_numbers() -> None:
    r = d.triple_loss(TEXT, seed=0, temperature=2.0, device="cpu", dtype="float32")
    np.testing.assert_array_equal(r.teacher_logits, _triple().teacher_logits)
    np.testing.assert_array_equal(r.student_hidden, _triple().student_hidden)
    assert (r.ce, r.mlm, r.cos) == (_triple().ce, _triple().mlm, _triple().cos)
    assert (r.device, r.dtype) == ("cpu", "float32") and r.to_dict()["device_name"] == "cpu"
    assert _layers().to_dict()["dtype"] == "float32"


@pytest.mark.parametrize("device", ["tpu", "cuda"])
def test_a_device_this_machine_lacks_is_a_message(device: str) -> None:
    import torch

    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ExplorerError):
        d.layerwise_loss(TEXT, device=device)
