"""Batches: windows cover the corpus in order, every step gets the same token budget, padding is masked."""

from __future__ import annotations

import itertools

from explorer.training import batches, corpus


def test_windows_are_framed_and_bounded() -> None:
    ws = batches.windows(corpus.bundled(), "heldout", 64)
    assert len(ws) > 100
    assert all(w[0] == "[CLS]" and w[-1] == "[SEP]" and 10 <= len(w) <= 64 for w in ws)


def test_every_window_length_is_cut_from_one_tokenization_as_each_document_alone_gives_it() -> None:
    text = corpus.bundled()
    for seq_len in (16, 64):  # the held-out part's per-document windows, from the shared ids and from scratch
        want = [w for doc in text.heldout for w in batches.document_windows(doc, seq_len)]
        assert list(batches.windows(text, "heldout", seq_len)) == want


def test_stream_visits_every_window_once_per_epoch_and_resumes_exactly() -> None:
    first = list(itertools.islice(batches.stream(10, seed=3), 25))
    assert sorted(i for e, i in first[:10]) == list(range(10)) and {e for e, _ in first[:10]} == {0}
    assert first[10:20] != first[:10] and {e for e, _ in first[20:]} == {2}
    assert list(itertools.islice(batches.stream(10, seed=3, start=13), 12)) == first[13:25]


def test_fill_reaches_the_token_budget_whatever_the_example_length() -> None:
    source = batches.stream(100, seed=0)
    short = batches.fill(source, lambda e, i: {"input_ids": [1] * 10}, 256)
    long = batches.fill(source, lambda e, i: {"input_ids": [1] * 100}, 256)
    assert len(short) == 26 and len(long) == 3


def test_collate_pads_labels_with_ignore_and_masks_padding() -> None:
    b = batches.collate([{"input_ids": [2, 7, 3], "labels": [-100, 7, -100], "sentence_label": 1},
                         {"input_ids": [2, 3], "labels": [-100, -100], "sentence_label": 0}])
    assert b["labels"].tolist() == [[-100, 7, -100], [-100, -100, -100]]
    assert b["attention_mask"].tolist() == [[1, 1, 1], [1, 1, 0]]
    assert b["sentence_label"].tolist() == [1, 0]
