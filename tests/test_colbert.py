"""Late interaction: MaxSim, rank statistics, ColBERT input format, ColBERTv2 compression."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import colbert as cb
from explorer.errors import ExplorerError

DOCS = ["The Eiffel Tower is in Paris.", "Stock markets fell sharply today.", "A kitten sleeps on a rug.",
        "Paris is the capital of France.", "Dogs bark at night."]


@pytest.fixture(scope="module")
def bundled():
    from explorer.loading import load_model

    return load_model("sentence-bert")


@pytest.fixture(scope="module")
def colbert_dir(tmp_path_factory):
    """A tiny BERT saved with a ColBERT projection file next to it, as colbert-ir checkpoints carry."""
    from safetensors.torch import save_file

    from tests.tiny_models import save_tiny

    path = save_tiny("bert-base", tmp_path_factory.mktemp("colbert") / "tiny-colbert")
    torch.manual_seed(1)
    save_file({"linear.weight": torch.randn(128, 32)}, str(path / "colbert_linear.safetensors"))
    return path


# ---------------------------------------------------------------- MaxSim on hand-made vectors


def _emb(rows: list[list[float]], kind: str = "document") -> cb.TokenEmbeddings:
    vecs = F.normalize(torch.tensor(rows, dtype=torch.float32), dim=1)
    return cb.TokenEmbeddings("t", kind, tuple(f"t{i}" for i in range(len(rows))), vecs)


def test_maxsim_picks_each_query_tokens_best_document_token() -> None:
    q = _emb([[1, 0, 0], [0, 1, 0]], "query")
    d = _emb([[0, 1, 0], [1, 1, 0], [1, 0, 0.01]])
    m = cb.maxsim(q, d)
    assert m.best == (2, 0)  # query token 0 ~ doc token 2, query token 1 = doc token 0
    assert m.best_sim[1] == pytest.approx(1.0)
    assert m.score == pytest.approx(sum(max(r) for r in m.matrix), abs=1e-4)
    assert len(m.matrix) == 2 and len(m.matrix[0]) == 3


def test_maxsim_scores_match_brute_force() -> None:
    gen = torch.Generator().manual_seed(0)
    q = F.normalize(torch.randn(5, 8, generator=gen), dim=1)
    docs = [F.normalize(torch.randn(n, 8, generator=gen), dim=1) for n in (3, 7, 1)]
    brute = [sum(max(float(qi @ dj) for dj in d) for qi in q) for d in docs]
    torch.testing.assert_close(cb.maxsim_scores(q, docs), torch.tensor(brute), atol=1e-5, rtol=0)


def test_ranks_and_top_k_overlap() -> None:
    assert cb.ranks([0.1, 0.9, 0.5]) == [3, 1, 2]
    assert cb.ranks([1.0, 1.0]) == [1, 2]  # ties keep input order
    assert cb.top_k_overlap([3, 2, 1, 0], [3, 2, 0, 1], 2) == 1.0
    assert cb.top_k_overlap([3, 2, 1, 0], [0, 1, 2, 3], 2) == 0.0


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=2, max_size=25))
def test_kendall_tau_equals_scipy_tau_b_with_ties(pairs) -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    ref = scipy_stats.kendalltau(a, b).statistic
    ours = cb.kendall_tau(a, b)
    if math.isnan(ref):  # scipy: undefined when one side is constant
        assert ours in (0.0, 1.0)
    else:
        assert ours == pytest.approx(ref, abs=1e-9)


def test_kendall_tau_extremes() -> None:
    assert cb.kendall_tau([1, 2, 3], [10, 20, 30]) == 1.0
    assert cb.kendall_tau([1, 2, 3], [3, 2, 1]) == -1.0
    with pytest.raises(ExplorerError):
        cb.kendall_tau([1, 2], [1])


# ---------------------------------------------------------------- compression


def _clusters(n_per: int = 40, k: int = 4, dim: int = 16, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    centers = F.normalize(torch.randn(k, dim, generator=gen), dim=1)
    x = centers.repeat_interleave(n_per, 0) + 0.05 * torch.randn(k * n_per, dim, generator=gen)
    return F.normalize(x, dim=1), torch.arange(k).repeat_interleave(n_per)


def test_kmeans_is_seeded_and_recovers_separated_clusters() -> None:
    x, labels = _clusters()
    c1, c2 = cb.kmeans(x, 4, seed=3), cb.kmeans(x, 4, seed=3)
    torch.testing.assert_close(c1, c2)
    assign = (x @ c1.T).argmax(1)
    for lab in range(4):  # every true cluster maps to exactly one centroid
        assert assign[labels == lab].unique().numel() == 1
    assert assign.unique().numel() == 4
    with pytest.raises(ExplorerError, match="centroids"):
        cb.kmeans(x[:3], 5)


@pytest.mark.parametrize("bits", [1, 2])
def test_compress_packs_b_bits_and_decompresses_to_centroid_plus_bucket(bits: int) -> None:
    x, _ = _clusters(dim=20)  # 20 * bits is not a multiple of 8 for bits=1: padding must not leak
    codec = cb.train_codec(x, 4, bits)
    comp = cb.compress(x, codec)
    assert comp.packed.dtype == np.uint8 and comp.packed.shape == (x.shape[0], math.ceil(20 * bits / 8))
    assert comp.codes.dtype == np.int32 and comp.codes.max() < 4
    assert codec.cutoffs.numel() == 2**bits - 1 and codec.weights.numel() == 2**bits
    # Decompression must equal: nearest centroid + the bucket value of each residual coordinate.
    resid = x - codec.centroids[torch.from_numpy(comp.codes).long()]
    expected = F.normalize(codec.centroids[torch.from_numpy(comp.codes).long()]
                           + codec.weights[torch.bucketize(resid, codec.cutoffs)], dim=1)
    torch.testing.assert_close(cb.decompress(comp, codec), expected)


def test_two_bits_reconstruct_better_than_one() -> None:
    gen = torch.Generator().manual_seed(0)
    x = F.normalize(torch.randn(300, 64, generator=gen), dim=1)
    cos = {}
    for bits in (1, 2):
        codec = cb.train_codec(x, 8, bits)
        cos[bits] = float((cb.decompress(cb.compress(x, codec), codec) * x).sum(1).mean())
    assert 0.5 < cos[1] < cos[2] < 1.0


def test_storage_matches_the_colbertv2_paper() -> None:
    # ColBERTv2 (Santhanam et al. 2022): 128-d vectors take 20 (1-bit) or 36 (2-bit) bytes vs 256 in fp16.
    assert cb.bytes_per_token(128, 1) == 20 and cb.bytes_per_token(128, 2) == 36
    assert cb.default_k(100) == 16 and cb.default_k(10**6) == 2**int(math.log2(16 * 1000))
    assert cb.default_k(2) == 2


# ---------------------------------------------------------------- encoders


def test_stand_in_is_labelled_and_ranks_sensibly(bundled) -> None:
    enc = cb.make_encoder(bundled)
    assert enc.stand_in and "stand-in" in enc.label
    r = cb.rank(enc, bundled, "Where is the Eiffel Tower?", "\n".join(DOCS))
    assert r.stand_in and cb.STAND_IN_NOTE in r.notices
    assert r.docs[0].text == DOCS[0] and r.docs[0].colbert_rank == 1
    assert sorted(d.colbert_rank for d in r.docs) == list(range(1, 6))
    assert sorted(d.bi_rank for d in r.docs) == list(range(1, 6))
    late = [d.colbert_score for d in sorted(r.docs, key=lambda d: d.index)]
    bi = [d.bi_score for d in sorted(r.docs, key=lambda d: d.index)]
    assert r.kendall_tau == pytest.approx(cb.kendall_tau(late, bi), abs=1e-5)


def test_colbert_checkpoint_uses_projection_and_input_format(colbert_dir) -> None:
    from explorer.loading import load_model

    enc = cb.make_encoder(load_model(str(colbert_dir)))
    assert not enc.stand_in and enc.projection.shape == (128, 32)
    q = cb.encode_tokens(enc, "where is paris?", "query")
    assert q.vectors.shape == (cb.QUERY_MAXLEN, 128)  # padded with [MASK] to 32 (query augmentation)
    assert q.tokens[:2] == ("[CLS]", cb.QUERY_MARKER) and q.tokens[-1] == "[MASK]"
    d = cb.encode_tokens(enc, "Paris, France.", "document")
    assert d.tokens == ("[CLS]", cb.DOC_MARKER, "paris", "france", "[SEP]")  # punctuation dropped
    torch.testing.assert_close(d.vectors.norm(dim=1), torch.ones(5))


def test_compression_study_reports_both_bit_widths(bundled) -> None:
    study = cb.compression_study(cb.make_encoder(bundled), "Where is the Eiffel Tower?", DOCS, k=8)
    assert [r.bits for r in study.reports] == [1, 2] and study.k == 8 and study.dim == 384
    one, two = study.reports
    assert one.bytes_per_token == 4 + 48 and two.bytes_per_token == 4 + 96
    assert one.ratio_vs_fp16 == pytest.approx(768 / 52, abs=1e-3)
    assert one.mean_cosine < two.mean_cosine <= 1.0
    assert two.max_abs_score_change <= one.max_abs_score_change + 1e-6
    assert len(two.scores) == len(DOCS) and -1.0 <= two.kendall_tau <= 1.0
    assert study.to_dict()["reports"][0]["bits"] == 1


def test_long_documents_are_reported_cut(colbert_dir) -> None:
    from explorer.loading import load_model

    loaded = load_model(str(colbert_dir))
    r = cb.rank(cb.make_encoder(loaded), loaded, "a question " * 20, ["short doc", "word " * 300])
    assert "The query has 40 tokens; only the first 29 are used." in r.notices
    assert "Document 2 has 300 tokens; only the first 125 are used." in r.notices  # tiny model: 128 positions


@pytest.mark.parametrize("query", ["", " \n ", "x" * 50_000])
def test_bad_query_is_refused(bundled, query: str) -> None:
    with pytest.raises(ExplorerError):
        cb.rank(cb.make_encoder(bundled), bundled, query, DOCS)
