"""explorer.tasks.colbert.encoder: which checkpoint serves ColBERT, its input format, the labelled stand-in, cut
texts."""

from __future__ import annotations

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice
from explorer.runtime.resolve import resolve
from explorer.tasks import colbert as cb
from explorer.tasks.colbert import encoder


@pytest.fixture(scope="module")
def bundled(bundled_encoder):
    from explorer.runtime.loading import load_model

    return load_model(resolve("sentence-bert"))


def _tiny_colbert(path, projection: bool = True):
    """A tiny BERT saved with (or without) a ColBERT projection file next to it, as colbert-ir checkpoints carry."""
    from safetensors.torch import save_file

    from tests.tiny_models import save_tiny

    save_tiny("bert-base", path)
    if projection:
        torch.manual_seed(1)
        save_file({"linear.weight": torch.randn(128, 32)}, str(path / "colbert_linear.safetensors"))
    return path


@pytest.fixture(scope="module")
def colbert_dir(tmp_path_factory):
    return _tiny_colbert(tmp_path_factory.mktemp("colbert") / "tiny-colbert")


def test_stand_in_is_labelled(bundled) -> None:
    enc = encoder.make_encoder(bundled)
    assert enc.stand_in and enc.projection is None and "stand-in" in enc.label
    assert encoder.limits(enc) == (512, 512)
    d = encoder.encode_tokens(enc, "Paris, France.", "document")
    assert d.tokens == ("[CLS]", "paris", "france", "[SEP]")  # no ColBERT markers; punctuation still dropped
    assert d.vectors.shape == (4, 384)


def test_colbert_checkpoint_uses_projection_and_input_format(colbert_dir) -> None:
    from explorer.runtime.loading import load_model

    enc = encoder.make_encoder(load_model(resolve(str(colbert_dir))))
    assert not enc.stand_in and enc.projection.shape == (128, 32) and enc.label.startswith("ColBERT (")
    q = encoder.encode_tokens(enc, "where is paris?", "query")
    assert q.vectors.shape == (encoder.QUERY_MAXLEN, 128)  # padded with [MASK] to 32 (query augmentation)
    assert q.tokens[:2] == ("[CLS]", encoder.QUERY_MARKER) and q.tokens[-1] == "[MASK]"
    d = encoder.encode_tokens(enc, "Paris, France.", "document")
    assert d.tokens == ("[CLS]", encoder.DOC_MARKER, "paris", "france", "[SEP]")  # punctuation dropped
    torch.testing.assert_close(d.vectors.norm(dim=1), torch.ones(5))
    assert d.to_dict()["dim"] == 128
    assert encoder.limits(enc) == (32, 128)  # the tiny model has 128 positions: below ColBERT's 180


def test_a_projection_of_the_wrong_width_is_refused(tmp_path) -> None:
    from safetensors.torch import save_file

    from explorer.runtime.loading import load_model

    path = _tiny_colbert(tmp_path / "bad", projection=False)
    save_file({"linear.weight": torch.randn(128, 64)}, str(path / "colbert_linear.safetensors"))
    with pytest.raises(ExplorerError, match="64-d input but the model is 32-d"):
        encoder.make_encoder(load_model(resolve(str(path))))


def test_checkpoint_key_needs_weights_and_a_projection(tmp_path) -> None:
    assert encoder.checkpoint_key(str(tmp_path)) is None  # nothing on disk
    _tiny_colbert(tmp_path / "colbert", projection=False)  # plain BERT filed as "colbert": no projection
    assert encoder.checkpoint_key(str(tmp_path)) is None
    _tiny_colbert(tmp_path / "colbertv2")
    assert encoder.checkpoint_key(str(tmp_path)) == "colbertv2"


def test_the_encoder_ref_names_the_checkpoint_or_the_stand_in(tmp_path) -> None:
    stand_in = cb.encoder_ref(str(tmp_path))
    assert cb.load_encoder(stand_in).stand_in
    _tiny_colbert(tmp_path / "colbertv2")
    ref = cb.encoder_ref(str(tmp_path))
    assert ref.spec == "colbertv2" and ref != stand_in  # a page's cache keyed on the ref misses once it is there
    assert not cb.load_encoder(ref).stand_in


def test_read_projection_without_a_path_or_file(tmp_path) -> None:
    assert encoder.read_projection(None) is None and encoder.read_projection(str(tmp_path)) is None


def test_long_texts_are_reported_cut(colbert_dir) -> None:
    from explorer.runtime.loading import load_model

    enc = encoder.make_encoder(load_model(resolve(str(colbert_dir))))
    notes = encoder.truncation_notices(enc, "a question " * 20, ("short doc", "word " * 300))
    assert notes == (Notice("truncated", "The query has 40 tokens; only the first 29 are used."),
                     Notice("truncated", "Document 2 has 300 tokens; only the first 125 are used."))


@pytest.mark.parametrize("query", ["", " \n ", "x" * 50_000])
def test_bad_query_is_refused(bundled, query: str) -> None:
    with pytest.raises(ExplorerError, match="query"):
        encoder.encode_collection(encoder.make_encoder(bundled), query, ("a doc",))


def test_a_request_out_of_budget_stops_between_documents(bundled) -> None:
    """One forward per document: a server request whose time is spent stops at the next one, not after the list
    (200 sentences once ran 123 s against a 60 s budget)."""
    import itertools

    from explorer.runtime import cancel

    ticks = itertools.count()
    token = cancel.CancelToken(cancel.RequestBudget(3.0, 2**40, "test"), clock=lambda: float(next(ticks)),
                               memory=lambda: 0)
    docs = tuple(f"Document number {i}." for i in range(50))
    with cancel.scope(token), pytest.raises(cancel.RequestStopped):
        encoder.encode_collection(encoder.make_encoder(bundled), "a query", docs)
    assert next(ticks) < 20  # stopped after a few documents, not fifty
