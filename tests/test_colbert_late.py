"""explorer.tasks.colbert.late: MaxSim, rank statistics, the ranking next to the bi-encoder's."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice
from explorer.runtime.resolve import resolve
from explorer.tasks import colbert as cb
from explorer.tasks.colbert import encoder
from explorer.tasks.colbert import late as colbert_late

DOCS = ["The Eiffel Tower is in Paris.", "Stock markets fell sharply today.", "A kitten sleeps on a rug.",
        "Paris is the capital of France.", "Dogs bark at night."]


@pytest.fixture(scope="module")
def bundled(bundled_encoder):
    from explorer.runtime.loading import load_model

    return load_model(resolve("sentence-bert"))


def _emb(rows: list[list[float]], kind: str = "document") -> encoder.TokenEmbeddings:
    vecs = F.normalize(torch.tensor(rows, dtype=torch.float32), dim=1)
    return encoder.TokenEmbeddings("t", kind, tuple(f"t{i}" for i in range(len(rows))), vecs)


def test_maxsim_picks_each_query_tokens_best_document_token() -> None:
    q = _emb([[1, 0, 0], [0, 1, 0]], "query")
    d = _emb([[0, 1, 0], [1, 1, 0], [1, 0, 0.01]])
    m = colbert_late.maxsim(q, d)
    assert m.best == (2, 0)  # query token 0 ~ doc token 2, query token 1 = doc token 0
    assert m.best_sim[1] == pytest.approx(1.0)
    assert m.score == pytest.approx(sum(max(r) for r in m.matrix), abs=1e-4)
    assert len(m.matrix) == 2 and len(m.matrix[0]) == 3
    assert m.to_dict()["best"] == [2, 0]


def test_maxsim_scores_match_brute_force() -> None:
    gen = torch.Generator().manual_seed(0)
    q = F.normalize(torch.randn(5, 8, generator=gen), dim=1)
    docs = [F.normalize(torch.randn(n, 8, generator=gen), dim=1) for n in (3, 7, 1)]
    brute = [sum(max(float(qi @ dj) for dj in d) for qi in q) for d in docs]
    torch.testing.assert_close(colbert_late.maxsim_scores(q, docs), torch.tensor(brute), atol=1e-5, rtol=0)


def test_ranks_and_top_k_overlap() -> None:
    assert colbert_late.ranks([0.1, 0.9, 0.5]) == [3, 1, 2]
    assert colbert_late.ranks([1.0, 1.0]) == [1, 2]  # ties keep input order
    assert colbert_late.top_k_overlap([3, 2, 1, 0], [3, 2, 0, 1], 2) == 1.0
    assert colbert_late.top_k_overlap([3, 2, 1, 0], [0, 1, 2, 3], 2) == 0.0


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=2, max_size=25))
def test_kendall_tau_equals_scipy_tau_b_with_ties(pairs) -> None:
    from scipy import stats as scipy_stats

    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    ref = scipy_stats.kendalltau(a, b).statistic
    ours = colbert_late.kendall_tau(a, b)
    if math.isnan(ref):  # scipy: undefined when one side is constant
        assert ours in (0.0, 1.0)
    else:
        assert ours == pytest.approx(ref, abs=1e-9)


def test_kendall_tau_extremes() -> None:
    assert colbert_late.kendall_tau([1, 2, 3], [10, 20, 30]) == 1.0
    assert colbert_late.kendall_tau([1, 2, 3], [3, 2, 1]) == -1.0
    assert colbert_late.kendall_tau([1], [2]) == 1.0
    with pytest.raises(ExplorerError):
        colbert_late.kendall_tau([1, 2], [1])


def test_stand_in_ranks_sensibly_and_says_it_is_a_stand_in(bundled) -> None:
    enc = encoder.make_encoder(bundled)
    r = cb.rank(enc, bundled, "Where is the Eiffel Tower?", "\n".join(DOCS + ["", DOCS[0]]))
    assert r.stand_in and Notice("stand-in", encoder.STAND_IN_NOTE) in r.notices
    assert [n.kind for n in r.notices] == ["dropped", "dropped", "stand-in"]
    assert r.docs[0].text == DOCS[0] and r.docs[0].colbert_rank == 1
    assert sorted(d.colbert_rank for d in r.docs) == list(range(1, 6))
    assert sorted(d.bi_rank for d in r.docs) == list(range(1, 6))
    late = [d.colbert_score for d in sorted(r.docs, key=lambda d: d.index)]
    bi = [d.bi_score for d in sorted(r.docs, key=lambda d: d.index)]
    assert r.kendall_tau == pytest.approx(colbert_late.kendall_tau(late, bi), abs=1e-5)
    assert r.to_dict()["notices"][-1] == encoder.STAND_IN_NOTE  # JSON keeps the texts


def test_maxsim_texts_encodes_both_sides(bundled) -> None:
    enc = encoder.make_encoder(bundled)
    m = cb.maxsim_texts(enc, "Eiffel Tower", "The Eiffel Tower is in Paris.")
    assert m.query_tokens == ("[CLS]", "e", "##iff", "##el", "tower", "[SEP]")
    assert m.doc_tokens[m.best[m.query_tokens.index("tower")]] == "tower"  # each word finds itself


@pytest.mark.parametrize("query", ["", " \n ", "x" * 50_000])
def test_bad_query_is_refused(bundled, query: str) -> None:
    with pytest.raises(ExplorerError):
        cb.rank(encoder.make_encoder(bundled), bundled, query, DOCS)
