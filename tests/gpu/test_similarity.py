"""Similarity and ColBERT's stand-in per device and dtype: equal to sentence-transformers on the same weights
and dtype (sentence embeddings, and token embeddings); CPU and CUDA agree."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from explorer.tasks import similarity as sim
from explorer.tasks.colbert import encoder
from tests.gpu.conftest import AGREEMENT, CUDA_HALF, PLACES, TOLERANCE
from tests.gpu.peaked import place

SENTENCES = ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.",
             "x", " ".join(["A long sentence past the bi-encoder's 256-token limit."] * 30)]


@pytest.fixture(scope="module")
def minilm():
    from explorer.runtime import weights

    return weights.locate("sentence-bert").path  # the bundled all-MiniLM-L6-v2


def _st(path: str, device: str, dtype: torch.dtype):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device=device).to(dtype)


@pytest.mark.parametrize("where", PLACES)
def test_embeddings_equal_sentence_transformers(minilm, where) -> None:
    lm = place(minilm, *where, "bert-base")
    ours = sim.encode(lm, SENTENCES, batch_size=2)
    ref = _st(minilm, *where).encode(SENTENCES, batch_size=2, convert_to_tensor=True).float().cpu()
    assert float((ours - ref).abs().max()) <= TOLERANCE[where[1]]


@pytest.mark.parametrize("where", PLACES)
def test_colbert_stand_in_token_vectors_equal_sentence_transformers(minilm, where) -> None:
    lm = place(minilm, *where, "bert-base")
    ours = encoder.encode_tokens(encoder.make_encoder(lm), "Paris, France.", "document")
    tokens = _st(minilm, *where).encode("Paris, France.", output_value="token_embeddings", convert_to_tensor=True)
    ref = F.normalize(tokens.float().cpu(), dim=-1)  # (T, 384) every token; ours keeps all but punctuation
    kept = [i for i, t in enumerate(lm.tokenizer("Paris, France.")["input_ids"])
            if lm.tokenizer.convert_ids_to_tokens(t) in ours.tokens]
    assert float((ours.vectors - ref[kept]).abs().max()) <= TOLERANCE[where[1]]


@pytest.mark.parametrize("where", CUDA_HALF)
def test_cuda_similarity_agrees_with_the_cpu(minilm, where) -> None:
    cpu = torch.tensor(sim.similarity(place(minilm, "cpu", torch.float32, "bert-base"), SENTENCES[:4]).matrix)
    gpu = torch.tensor(sim.similarity(place(minilm, *where, "bert-base"), SENTENCES[:4]).matrix)
    assert float((gpu - cpu).abs().max()) <= AGREEMENT[where[1]]
