"""The lab corpus: the bundled text is real, its split is fixed and disjoint, user files are checked."""

from __future__ import annotations

import lzma

import pytest

from explorer.core.errors import ExplorerError
from explorer.training import corpus


def test_the_bundled_corpus_is_about_a_million_words_of_english_prose() -> None:
    c = corpus.bundled()
    assert 900_000 < c.words < 1_100_000
    assert abs(len(c.heldout) - len(c.train + c.heldout) / corpus.HELDOUT_EVERY) <= 1
    assert 0.03 < sum(len(p.split()) for d in c.heldout for p in d) / c.words < 0.07
    text = " ".join(p for doc in c.train[:20] for p in doc).lower()
    for word in (" the ", " function ", " returns ", " module "):
        assert word in text


def test_train_and_heldout_share_no_paragraph() -> None:
    c = corpus.bundled()
    train = {p for doc in c.train for p in doc}
    held = [p for doc in c.heldout for p in doc]
    assert held and not train & set(held)  # repeated boilerplate is dropped from the held-out side


def test_the_attribution_names_the_corpus_and_its_licence() -> None:
    text = (corpus.BUNDLED.parents[1] / "ATTRIBUTION.md").read_text(encoding="utf-8")
    assert "python-docs.txt.xz" in text and "PSF License" in text


def test_the_build_script_keeps_prose_and_drops_code() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_corpus", corpus.BUNDLED.with_name("build_corpus.py"))
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rst = ("Title\n=====\n\nThe :func:`len` function returns the number of items in a container.\n\n"
           "For example::\n\n   >>> len([1, 2])\n   2\n\n.. code-block:: python\n\n   x = 1\n\n"
           "Use ``sorted()`` when you need a new list rather than sorting in place.\n")
    assert mod.paragraphs(rst) == ["The len function returns the number of items in a container.",
                                   "Use sorted() when you need a new list rather than sorting in place."]


def test_a_plain_text_file_becomes_documents_with_a_heldout_part(tmp_path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("\n\n".join(f"Paragraph {i} says something about cats and dogs." for i in range(400)),
                    encoding="utf-8")
    c = corpus.from_file(path)
    assert c.words == 400 * 8 and c.heldout and c.train
    assert not {p for d in c.train for p in d} & {p for d in c.heldout for p in d}


@pytest.mark.parametrize(("content", "message"), [
    (b"", "needs at least"),
    (b"too short " * 10, "needs at least"),
    (b"\x00\x01binary" * 100, "binary"),
    (b"\xff\xfe caf\xe9 " * 1000, "not UTF-8"),
])
def test_bad_text_files_get_a_clear_message(tmp_path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(ExplorerError, match=message):
        corpus.from_file(path)


def test_a_huge_file_is_refused_before_it_is_read(tmp_path) -> None:
    path = tmp_path / "huge.txt"
    with open(path, "wb") as fh:  # sparse: 1 GB on paper, nothing on disk
        fh.truncate(1 << 30)
    with pytest.raises(ExplorerError, match="larger than"):
        corpus.from_file(path)


def test_missing_and_directory_paths_say_what_is_wrong(tmp_path) -> None:
    with pytest.raises(ExplorerError, match="Cannot read"):
        corpus.from_file(tmp_path / "nope.txt")
    with pytest.raises(ExplorerError, match="directory"):
        corpus.from_file(tmp_path)


def test_unicode_and_html_text_is_accepted_as_text() -> None:
    text = "\n\n".join(f"<b>Ünïcode</b> paragraph {i} — naïve café text here & there." for i in range(300))
    c = corpus.from_text(text, "unicode")
    assert c.words > corpus.MIN_WORDS


def test_the_bundled_file_is_xz_compressed_utf8() -> None:
    head = lzma.decompress(corpus.BUNDLED.read_bytes())[:200].decode("utf-8")
    assert head.startswith("### ")


def test_a_text_that_only_repeats_itself_has_nothing_to_hold_out() -> None:
    text = "\n".join(f"### d{d}\nThe same sentence is written again in every document here." for d in range(400))
    with pytest.raises(ExplorerError, match="does not repeat itself"):
        corpus.from_text(text, "echo")


def test_documents_keep_their_names_through_the_split() -> None:
    text = corpus.bundled()
    assert len(text.train_names) == len(text.train) and len(text.heldout_names) == len(text.heldout)
    assert "library/functools" in text.heldout_names and "tutorial/classes" in text.train_names
    plain = corpus.from_text("\n\n".join(f"Paragraph {i} says a few words about lists." for i in range(400)), "t")
    assert set(plain.train_names) == {""} and set(plain.heldout_names) == {""}
