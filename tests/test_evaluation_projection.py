"""The projector: PCA equal to scikit-learn's up to sign, t-SNE and UMAP identical across runs with one seed,
repeated vectors refused or drawn on their twins (never a crash or NaN), the worker process that survives a
native crash and a stopped request, Procrustes alignment, neighbours, and real MiniLM embeddings that put
paraphrases nearer than random pairs."""

from __future__ import annotations

import faulthandler
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.decomposition import PCA

from explorer.compression import quality
from explorer.core.errors import ExplorerError
from explorer.evaluation import bundled, layoutworker, projection, projector, vectors
from explorer.runtime import cancel
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve
from explorer.tasks import similarity
from tests.tiny_gemma import save_tiny_gemma

RNG = np.random.default_rng(0)
# three clusters in 20 dimensions: every method should keep them apart
BLOBS = np.concatenate([RNG.normal(c, 0.3, size=(15, 20)) for c in (0.0, 3.0, -3.0)])


@pytest.fixture(scope="module")
def minilm(bundled_encoder):
    return load_model(resolve(similarity.BI_ENCODER), device="cpu")


@pytest.mark.parametrize("dims", [2, 3])
def test_pca_equals_scikit_learns_up_to_sign(dims: int) -> None:
    ours = projection.project(BLOBS, "pca", dims).points
    theirs = PCA(dims).fit_transform(BLOBS)
    for k in range(dims):
        same = np.allclose(ours[:, k], theirs[:, k], atol=1e-8) or np.allclose(ours[:, k], -theirs[:, k], atol=1e-8)
        assert same, f"axis {k} differs beyond its sign"
    assert projection.project(BLOBS, "pca", dims).explained == pytest.approx(
        tuple(PCA(dims).fit(BLOBS).explained_variance_ratio_))


@pytest.mark.parametrize("method", ["tsne", "umap"])
def test_one_seed_gives_the_same_picture_every_time(method: str) -> None:
    first = projection.project(BLOBS, method, 2, seed=7).points
    again = projection.project(BLOBS, method, 2, seed=7).points
    assert np.array_equal(first, again)
    labels = np.repeat([0, 1, 2], 15)
    centres = np.array([first[labels == k].mean(0) for k in range(3)])
    spread = max(np.linalg.norm(first[labels == k] - centres[k], axis=1).mean() for k in range(3))
    gaps = min(np.linalg.norm(centres[a] - centres[b]) for a, b in ((0, 1), (0, 2), (1, 2)))
    assert gaps > spread  # the three clusters stay apart


def test_umaps_compiled_functions_are_cached_on_disk_for_the_next_process() -> None:
    projection.project(BLOBS, "umap", 2, seed=0)
    assert any(Path(projection.numba_cache_dir()).rglob("*.nbi"))  # the next process loads instead of compiling


@pytest.mark.parametrize("matrix, method, dims, needle", [
    (BLOBS[:3], "tsne", 2, "at least 5 points"), (BLOBS[:1], "pca", 2, "at least 2 points"),
    (BLOBS, "mds", 2, "Unknown projection"), (BLOBS, "pca", 4, "2 or 3 dimensions"),
    (np.full((6, 3), np.nan), "pca", 2, "6 of the 6 vectors hold NaN"),
])
def test_bad_projection_requests_are_refused(matrix, method: str, dims: int, needle: str) -> None:
    with pytest.raises(ExplorerError, match=needle):
        projection.project(matrix, method, dims)


SAME = np.tile(RNG.normal(size=(1, 20)), (10, 1))  # one sentence typed ten times


@pytest.mark.parametrize("method", ["tsne", "umap"])
def test_ten_copies_of_one_vector_are_refused_in_words_not_a_crash(method: str) -> None:
    """scikit-learn's t-SNE of these divides by a zero spread and dies of SIGSEGV; UMAP gives NaN points."""
    with pytest.raises(ExplorerError, match="All 10 texts have the same vector.*needs at least 5.*pick PCA"):
        projection.project(SAME, method, unit="texts")
    few = np.concatenate([SAME[:7], BLOBS[:3]])  # three different vectors: still too few
    with pytest.raises(ExplorerError, match="6 of the 10 texts repeat another's vector.*leaves 4 different"):
        projection.project(few, method, unit="texts")


def test_pca_draws_copies_on_one_spot_and_says_so() -> None:
    layout = projection.project(SAME + 1e-9 * RNG.normal(size=SAME.shape), "pca", unit="texts")  # float noise too
    assert np.isfinite(layout.points).all() and np.ptp(layout.points, axis=0).max() < 1e-6
    assert "All 10 texts have the same vector" in layout.notices[0].text


@pytest.mark.parametrize("method", ["pca", "tsne"])
def test_repeats_are_drawn_on_their_twins_and_the_distinct_ones_laid_out(method: str) -> None:
    x = np.concatenate([BLOBS[:8], BLOBS[[0, 0, 3]]])  # three repeats of two of the points
    layout = projection.project(x, method, seed=1, unit="texts")
    assert np.isfinite(layout.points).all()
    assert np.array_equal(layout.points[8], layout.points[0]) and np.array_equal(layout.points[10], layout.points[3])
    assert len({tuple(p) for p in layout.points.tolist()}) == 8
    assert "3 of the 11 texts repeat another's vector" in layout.notices[0].text
    assert projection.project(BLOBS, method, seed=1).notices == ()  # no repeat, no notice


def test_a_layout_without_finite_points_is_an_error_not_nan(monkeypatch) -> None:
    monkeypatch.setattr(layoutworker, "run", lambda fn, x, dims, seed, what: np.full((len(x), dims), np.nan))
    with pytest.raises(ExplorerError, match="UMAP gave 45 of 45 points no finite position"):
        projection.project(BLOBS, "umap")


def test_a_crash_in_the_worker_costs_one_call_and_the_next_one_works() -> None:
    assert layoutworker.run(math.hypot, 3.0, 4.0, what="a sum") == 5.0
    with pytest.raises(ExplorerError, match="computing a test crash was killed by signal SIGSEGV.*Only this request"):
        layoutworker.run(faulthandler._sigsegv, what="a test crash")  # type: ignore[attr-defined]  # as t-SNE died
    assert layoutworker.run(math.hypot, 6.0, 8.0, what="a sum") == 10.0
    with pytest.raises(ValueError, match="invalid literal"):  # an error of the job comes back as itself
        layoutworker.run(int, "x", what="a parse")


def test_a_stopped_request_stops_the_worker_mid_job() -> None:
    """A job that would run for minutes, in a request whose (fake) clock says its budget is spent at the first
    look: stopped, and the next job gets a fresh worker."""
    ticks = iter([0.0, *[100.0] * 1000])
    token = cancel.CancelToken(cancel.RequestBudget(10.0, 2**40, "test"), clock=lambda: next(ticks), memory=lambda: 0)
    import time

    with cancel.scope(token), pytest.raises(cancel.RequestStopped):
        layoutworker.run(time.sleep, 600.0, what="a long wait")
    assert layoutworker.run(math.hypot, 3.0, 4.0, what="a sum") == 5.0


def test_procrustes_turns_a_rotated_mirrored_layout_back() -> None:
    vec = vectors.Vectors("a", "sentences", BLOBS.astype(np.float32), tuple(map(str, range(45))),
                          tuple(range(45)), "test")
    first = projector.project(vec, "pca", 2)
    turn = np.array([[0.0, 1.0], [1.0, 0.0]])  # a reflection: Procrustes allows it
    second = projector.Projection(**{**first.__dict__, "model": "b", "points": 4 * first.points @ turn - 2})
    a, b = projector.side_by_side(first, second)
    assert np.allclose(b.points, a.points) and b.disparity == pytest.approx(0.0, abs=1e-12)
    assert "Procrustes" in b.notices[-1].text
    with pytest.raises(ExplorerError, match="same texts"):
        projector.side_by_side(first, projector.Projection(**{**first.__dict__, "points": first.points[:3]}))


def test_neighbours_rank_by_cosine_and_queries_are_checked() -> None:
    vec = vectors.Vectors("m", "sentences", np.eye(4, dtype=np.float32), ("a", "b", "c", "d"), (0, 1, 2, 3), "unit")
    near = projector.neighbours(vec, np.array([0.1, 0.0, 0.9, 0.3]), k=3)
    assert [n.text for n in near] == ["c", "d", "a"] and near[0].rank == 1
    for bad, needle in (("", "Type a sentence"), ("x" * 2001, "at most 2,000"), ("a\x00", "NUL")):
        with pytest.raises(ExplorerError, match=needle):
            projector.check_query(bad)


def test_minilm_sentence_vectors_are_sentence_berts_and_token_states_are_per_token(minilm) -> None:
    texts = bundled.lines()[:6]
    vec = vectors.sentences(minilm, texts)
    assert np.allclose(vec.matrix, similarity.encode(minilm, texts).numpy(), atol=1e-6)
    layer = vectors.sentences(minilm, texts, layer=3)
    assert layer.matrix.shape == vec.matrix.shape and not np.allclose(layer.matrix, vec.matrix)
    assert np.allclose(np.linalg.norm(layer.matrix, axis=1), 1.0, atol=1e-5)
    tokens = vectors.tokens(minilm, texts[:2], layer=2)
    words = [len(minilm.tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts[:2]]
    assert tokens.matrix.shape[0] == sum(words) and set(tokens.owners) == {0, 1}
    assert "·" in tokens.labels[0]
    with pytest.raises(ExplorerError, match="layers 0 \\(the embeddings\\) to 6"):
        vectors.sentences(minilm, texts, layer=7)
    out = projector.project(vec, "pca").to_dict()
    assert out["model"] == minilm.key and out["method"] == "pca" and np.shape(out["points"]) == (6, 2)


def test_a_decoders_sentence_vector_leaves_its_special_tokens_out(tmp_path) -> None:
    tiny = load_model(resolve(str(save_tiny_gemma(tmp_path / "g"))), "causal-lm", device="cpu")
    vec = vectors.sentences(tiny, ["one two three", "four"])
    assert vec.matrix.shape == (2, 32) and "mean-pooled" in vec.how
    assert np.allclose(np.linalg.norm(vec.matrix, axis=1), 1.0, atol=1e-5)


def test_paraphrases_are_nearer_than_random_pairs(minilm) -> None:
    """The bundled graded pairs: those graded 4-5 (the same meaning) are nearer in MiniLM's space than random
    pairings of the same sentences."""
    pairs, grades = quality.sentence_pairs(), quality.pair_grades()
    close = [p for p, g in zip(pairs, grades, strict=True) if g >= 4]
    firsts = vectors.sentences(minilm, [a for a, _ in close]).matrix
    seconds = vectors.sentences(minilm, [b for _, b in close]).matrix
    paraphrase = np.sum(firsts * seconds, axis=1)  # (P,) unit vectors: cosine
    shuffled = np.sum(firsts * np.roll(seconds, 1, axis=0), axis=1)  # each first with another pair's second
    assert len(close) >= 5 and paraphrase.mean() > shuffled.mean() + 0.3
    assert (paraphrase > np.median(shuffled)).mean() >= 0.9


def test_two_projections_one_cut_by_its_budget_are_compared_on_the_texts_both_have() -> None:
    rng = np.random.default_rng(0)
    whole = vectors.Vectors("a", "sentences", rng.normal(size=(5, 4)).astype(np.float32), tuple("vwxyz"),
                            (0, 1, 2, 3, 4), "random")
    cut = vectors.Vectors("b", "sentences", rng.normal(size=(3, 4)).astype(np.float32), tuple("vwx"), (0, 1, 2),
                          "random", left_out=2)
    first, second = projector.side_by_side(projector.project(whole, "pca"), projector.project(cut, "pca"))
    assert first.labels == second.labels == ("v", "w", "x") and len(first.points) == len(second.points) == 3
    assert "3 of 5 texts embedded" in second.notices[0].text and second.notices[0].kind == "stopped"
