"""explorer.compression.quality: the bundled texts are there and well formed; the original agrees with itself
perfectly; a damaged copy agrees less (Spearman itself: tests/test_correlation.py)."""

from __future__ import annotations

import copy

import pytest
import torch

from explorer.compression import quality
from explorer.runtime.resolve import resolve


def test_bundled_texts() -> None:
    pairs = quality.sentence_pairs()
    assert len(pairs) >= 40 and all(a.strip() and b.strip() for a, b in pairs)
    assert len(quality.heldout_text().split()) > 200
    probes = quality.probes()
    assert len(probes["encoder"]) >= 3 and len(probes["decoder"]) >= 3


@pytest.fixture(scope="module")
def minilm():
    from explorer.runtime.loading import load_model

    return load_model(resolve("sentence-bert"), device="cpu", dtype="float32")


def test_the_original_agrees_with_itself_and_noise_agrees_less(minilm) -> None:
    ref = quality.reference(minilm.model, minilm.tokenizer, False, "cpu")
    same = quality.measure(minilm.model, minilm.tokenizer, ref, "cpu")
    assert same.value == pytest.approx(1.0, abs=1e-5) and same.probes_kept == same.probes_total
    assert same.extra["spearman_vs_original"] == pytest.approx(1.0)
    noisy = copy.deepcopy(minilm.model)
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        for p in noisy.encoder.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    worse = quality.measure(noisy, minilm.tokenizer, ref, "cpu")
    assert worse.value < 0.99 and worse.extra["spearman_vs_original"] < 1.0


def test_embeddings_match_sentence_transformers(minilm) -> None:
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(minilm.path, device="cpu")
    texts = [s for pair in quality.sentence_pairs()[:4] for s in pair]
    ours = quality._embed(minilm.model, minilm.tokenizer, texts, "cpu")
    theirs = st.encode(texts, convert_to_tensor=True, normalize_embeddings=True)
    assert torch.allclose(ours, theirs.cpu(), atol=1e-5)


def test_decoder_reference_on_a_tiny_gemma(tmp_path) -> None:
    from tests.tiny_gemma import load_tiny_gemma

    loaded = load_tiny_gemma(tmp_path / "g", device="cpu")
    ref = quality.reference(loaded.model, loaded.tokenizer, True, "cpu")
    q = quality.measure(loaded.model, loaded.tokenizer, ref, "cpu")
    assert q.metric == "perplexity" and q.value == pytest.approx(ref.perplexity) and q.value > 1
    assert q.extra["top1_agreement"] == 1.0 and q.probes_kept == q.probes_total == len(quality.probes()["decoder"])
    assert isinstance(quality.answer(loaded.model, loaded.tokenizer, True, "Hello", [], "cpu"), str)
