"""explorer.training.sections: the early-exit task's examples are balanced, labelled by their document's name,
drawn from disjoint documents for train and test, seeded; a text without document names is a message."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.training import corpus, sections


@pytest.fixture(scope="module")
def text() -> corpus.Corpus:
    return corpus.bundled()


def test_labels_come_from_document_names() -> None:
    assert sections.label("library/os") == 1 and sections.label("whatsnew/3.5") == 0
    assert sections.label("reference/simple_stmts") == 0 and sections.label("") is None


def test_every_window_carries_its_documents_label(text) -> None:
    windows = sections.labelled_windows(text, "heldout", 64)
    assert {y for _, y in windows} == {0, 1}
    # the held-out documents, window by window, in order: the library ones are labelled 1
    expected = [sections.label(n) for doc, n in zip(text.heldout, text.heldout_names, strict=True)
                for _ in sections.batches.document_windows(doc, 64)]
    assert [y for _, y in windows] == expected


def test_examples_are_balanced_seeded_and_from_disjoint_documents(text) -> None:
    train = sections.examples(text, "train", 200, 0, 64)
    test = sections.examples(text, "heldout", 100, 0, 64)
    assert sum(e.label for e in train) == 100 and sum(e.label for e in test) == 50
    assert not {e.tokens for e in train} & {e.tokens for e in test}
    held = dict(sections.labelled_windows(text, "heldout", 64))
    assert all(held[e.tokens] == e.label for e in test)  # each test window is a held-out window of its label
    assert [e.tokens for e in sections.examples(text, "heldout", 100, 0, 64)] == [e.tokens for e in test]
    assert [e.tokens for e in sections.examples(text, "heldout", 100, 1, 64)] != [e.tokens for e in test]


def test_a_class_smaller_than_asked_repeats_its_windows(text) -> None:
    n = len(sections.labelled_windows(text, "heldout", 64)) * 3
    out = sections.examples(text, "heldout", n, 0, 64)
    assert len(out) == n - n % 2 and sum(e.label for e in out) == n // 2


def test_a_text_without_document_names_is_a_message() -> None:
    plain = corpus.from_text("\n\n".join(f"Paragraph {i} says a few words about lists." for i in range(400)),
                             "notes.txt")
    with pytest.raises(ExplorerError, match="bundled corpus"):
        sections.examples(plain, "train", 10, 0, 32)
