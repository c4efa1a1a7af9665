"""explorer.tasks.similarity: line cleaning, mean pooling, equality with sentence-transformers, notices."""

from __future__ import annotations

import json
import unicodedata

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice
from explorer.runtime.resolve import resolve
from explorer.tasks import similarity as sim

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "Ein Mann isst Brot. 🙂",
    "مرحبا بالعالم، هذا نص من اليمين إلى اليسار",
    "<script>alert('x')</script>",
    "x",
    " ".join(["A very long sentence that goes past the 256-token limit of the bi-encoder."] * 30),
]


@pytest.fixture(scope="module")
def bundled(bundled_encoder):
    from explorer.runtime.loading import load_model

    torch.set_num_threads(2)
    # float32 on the CPU, as the sentence-transformers reference below (tests/gpu/test_similarity.py: per device)
    return load_model(resolve("sentence-bert"), device="cpu")


# ---------------------------------------------------------------- cleaning


def test_clean_drops_empty_and_duplicate_lines_and_says_so() -> None:
    out = sim.clean_sentences("a cat\n\n   \na  cat\nthe dog\n\ta cat ")
    assert out.sentences == ("a cat", "the dog")
    assert out.notices == (Notice("dropped", "Dropped a duplicate of line 1: 'a cat'."),
                           Notice("dropped", "Dropped a duplicate of line 1: 'a cat'."),
                           Notice("dropped", "Ignored 2 empty line(s)."))
    assert out.to_dict()["notices"][-1] == "Ignored 2 empty line(s)."  # JSON keeps the texts


@pytest.mark.parametrize("bad", ["", "   \n\t\n", "\x00\x01\x1b"])
def test_clean_refuses_nothing_to_embed(bad: str) -> None:
    with pytest.raises(ExplorerError, match="No sentences"):
        sim.clean_sentences(bad)


def test_tidy_keeps_emoji_rtl_and_markup() -> None:
    for text in ["🙂 👩‍👩‍👧", "مرحبا بالعالم", "<b>x</b> & [y](z)"]:
        assert sim.tidy(text) == text
    assert sim.tidy("a\x00b\x07  c\n") == "ab c"


def test_clean_refuses_50k_characters_and_too_many_lines() -> None:
    with pytest.raises(ExplorerError, match="50,000 characters"):
        sim.clean_sentences("x" * 50_000)
    with pytest.raises(ExplorerError, match="limit is 3"):
        sim.clean_sentences([f"s{i}" for i in range(4)], max_sentences=3)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=30))
def test_clean_keeps_order_and_unique_nonempty_lines(lines: list[str]) -> None:
    expected: list[str] = []
    for line in lines:  # independent rule: drop control characters except whitespace, collapse spaces
        t = " ".join("".join(c for c in line if c.isspace() or unicodedata.category(c) != "Cc").split())
        if t and t not in expected:
            expected.append(t)
    if not expected:
        with pytest.raises(ExplorerError):
            sim.clean_sentences(lines)
        return
    assert list(sim.clean_sentences(lines).sentences) == expected


# ---------------------------------------------------------------- pooling


def test_mean_pool_ignores_padding_and_normalises() -> None:
    hidden = torch.tensor([[[1.0, 0.0], [3.0, 4.0], [100.0, 100.0]],
                           [[0.0, 2.0], [0.0, 0.0], [0.0, 0.0]]])  # (2, 3, 2)
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    out = sim.mean_pool(hidden, mask)
    torch.testing.assert_close(out[0], torch.tensor([2.0, 2.0]) / (8**0.5))  # mean of first two rows
    torch.testing.assert_close(out[1], torch.tensor([0.0, 1.0]))
    torch.testing.assert_close(out.norm(dim=1), torch.ones(2))


def test_mean_pool_all_padding_row_is_zero_not_nan() -> None:
    out = sim.mean_pool(torch.ones(1, 4, 3), torch.zeros(1, 4, dtype=torch.long))
    assert torch.isfinite(out).all()


# ---------------------------------------------------------------- against sentence-transformers


def test_embeddings_equal_sentence_transformers(bundled) -> None:
    from sentence_transformers import SentenceTransformer

    ours = sim.encode(bundled, SENTENCES, batch_size=3)  # small batches: the length sort matters
    st_model = SentenceTransformer(bundled.path, device="cpu")
    ref = st_model.encode(SENTENCES, batch_size=3, convert_to_tensor=True)
    assert ours.shape == (len(SENTENCES), 384)
    assert float((ours - ref.cpu()).abs().max()) < 1e-5
    assert sim.max_length(bundled) == st_model.max_seq_length == 256


def _varied(n: int) -> list[str]:
    """n distinct sentences from 1 to ~60 words (a mixed-length list: batches pad, sorting matters)."""
    words = ("the", "cat", "sat", "on", "a", "mat", "while", "some", "dogs", "ran", "far", "away", "from", "home",
             "under", "grey", "skies")
    return [f"{i} " + " ".join(words[(i * 7 + j) % len(words)] for j in range((i * 37) % 60)) for i in range(n)]


@pytest.mark.parametrize("batch_size", [32, 64, 128])
def test_embeddings_equal_sentence_transformers_at_each_batch_size(bundled, batch_size: int) -> None:
    """The packed, length-sorted path against ``SentenceTransformer.encode`` at the benchmark's batch sizes."""
    from sentence_transformers import SentenceTransformer

    sentences = _varied(150)  # 150 > 128: the last batch size still splits the list
    ours = sim.encode(bundled, sentences, batch_size=batch_size)
    ref = SentenceTransformer(bundled.path, device="cpu").encode(sentences, batch_size=batch_size,
                                                                 convert_to_tensor=True)
    assert float((ours - ref.cpu()).abs().max()) < 1e-5


def test_encode_restores_the_order_of_a_shuffled_list(bundled) -> None:
    sentences = _varied(70)
    perm = torch.randperm(70, generator=torch.Generator().manual_seed(0)).tolist()
    straight = sim.encode(bundled, sentences, batch_size=32)
    shuffled = sim.encode(bundled, [sentences[i] for i in perm], batch_size=32)
    torch.testing.assert_close(shuffled, straight[perm], atol=1e-5, rtol=0)


def test_packed_path_equals_the_padded_model(bundled, monkeypatch) -> None:
    from explorer.tasks import packedencoder

    assert packedencoder.supports(bundled.model)
    packed = sim.encode(bundled, SENTENCES, batch_size=4)
    monkeypatch.setattr(packedencoder, "supports", lambda model: False)
    torch.testing.assert_close(sim.encode(bundled, SENTENCES, batch_size=4), packed, atol=1e-5, rtol=0)


def test_encode_keeps_input_order(bundled) -> None:
    fwd = sim.encode(bundled, SENTENCES[:5], batch_size=2)
    back = sim.encode(bundled, SENTENCES[:5][::-1], batch_size=4)
    torch.testing.assert_close(fwd, back.flip(0), atol=1e-5, rtol=0)


def test_matrix_and_search_agree(bundled) -> None:
    res = sim.similarity(bundled, "\n".join(SENTENCES[:4]))
    mat = torch.tensor(res.matrix)
    torch.testing.assert_close(mat, mat.T)
    torch.testing.assert_close(mat.diagonal(), torch.ones(4), atol=1e-5, rtol=0)
    assert mat[0, 1] > mat[0, 2]  # eating food ~ eating bread, not carrying a baby
    hits = sim.search(bundled, "Someone eats a sandwich", SENTENCES[:4]).hits
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    assert hits[0].sentence in SENTENCES[:2]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert json.dumps(res.to_dict()) and json.dumps(sim.search(bundled, "a", ["b"]).to_dict())


def test_long_sentence_gets_a_truncation_notice(bundled) -> None:
    res = sim.similarity(bundled, ["short", "word " * 400, "short"])
    assert [n.kind for n in res.notices] == ["dropped", "truncated"]
    assert res.notices[1].text == "Line 2 has 402 tokens; only the first 256 are embedded (the model's limit)."
    assert res.to_dict()["notices"][1] == res.notices[1].text


def test_concurrent_requests_return_their_own_results(bundled) -> None:
    from concurrent.futures import ThreadPoolExecutor

    jobs = [SENTENCES[i : i + 3] for i in range(5)]
    expected = [np.array(sim.similarity(bundled, j).matrix) for j in jobs]
    with ThreadPoolExecutor(4) as pool:  # sessions share one cached model
        got = list(pool.map(lambda j: (j, np.array(sim.similarity(bundled, j).matrix)), jobs * 2))
    for job, matrix in got:
        assert matrix.shape == (3, 3)
        np.testing.assert_allclose(matrix, expected[jobs.index(job)], atol=1e-5)


@pytest.mark.parametrize("query", ["", "   ", "x" * 50_000])
def test_search_refuses_bad_query(bundled, query: str) -> None:
    with pytest.raises(ExplorerError, match="query"):
        sim.search(bundled, query, SENTENCES[:2])


def test_encoder_decoder_is_refused(tmp_path) -> None:
    from explorer.runtime.loading import load_model
    from tests.tiny_models import save_tiny

    loaded = load_model(resolve(str(save_tiny("t5", tmp_path / "t5"))), "base")
    with pytest.raises(ExplorerError, match="encoder-decoder"):
        sim.similarity(loaded, ["a", "b"])
