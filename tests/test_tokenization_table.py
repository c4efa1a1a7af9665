"""explorer.tokenization.table: presets, display and CSV rows, notices about long texts."""

from __future__ import annotations

from explorer.core.notices import Notice
from explorer.tokenization.registry import TOKENIZERS
from explorer.tokenization.specials import FAMILIES, family_tokens
from explorer.tokenization.split import compare, tokenize
from explorer.tokenization.table import (
    DEFAULT_PRESET,
    PRESETS,
    family_rows,
    join_pieces,
    notices,
    spec_rows,
    summary_rows,
    token_rows,
    word_split_rows,
)


def test_presets_cover_the_hard_cases() -> None:
    assert DEFAULT_PRESET in PRESETS
    assert {"Emoji", "Right-to-left", "HTML tags", "Code"} <= set(PRESETS)
    assert all(text.strip() for text in PRESETS.values())


def test_summary_rows_count_every_token() -> None:
    results = compare("good gooooood", ["bert-base-uncased", "gpt2"])
    rows = summary_rows(results)
    assert [r["tokenizer"] for r in rows] == ["bert-base-uncased", "gpt2"]
    bert = rows[0]
    assert (bert["tokens"], bert["text tokens"], bert["special tokens"], bert["words"]) == (6, 4, 2, 2)
    assert bert["tokens per word"] == 2.0 and bert["limit"] == 512 and bert["cut at character"] is None


def test_token_rows_are_one_per_token_and_can_be_capped() -> None:
    t = tokenize("bert-base-uncased", "My gooooood 😀")
    rows = token_rows([t])
    assert len(rows) == t.count and [r["token"] for r in rows] == list(t.tokens)
    assert [r["unknown"] for r in rows].count(True) == 1
    assert rows[2]["word"] == "gooooood" and rows[0]["word"] is None
    assert len(token_rows([t, t], max_tokens=3)) == 6


def test_a_huge_word_is_cut_short_on_every_row() -> None:
    t = tokenize("gpt2", "x" * 5000)
    words = {r["word"] for r in token_rows([t])}
    assert words == {"x" * 39 + "…"}
    assert word_split_rows([t])[0]["word"] == "x" * 39 + "…"


def test_word_split_rows_show_each_tokenizers_pieces() -> None:
    rows = word_split_rows(compare("good gooooood", ["bert-base-uncased", "t5"]), max_words=5)
    assert rows[1]["word"] == "gooooood"
    assert rows[1]["bert-base-uncased"] == "goo ##oo ##ood" and rows[1]["bert-base-uncased pieces"] == 3
    assert word_split_rows([]) == []


def test_join_pieces_caps_the_list() -> None:
    assert join_pieces(["a", "b"]) == "a b"
    assert join_pieces([str(i) for i in range(40)], limit=2, sep=" · ") == "0 · 1 · … (40 pieces)"


def test_spec_rows_list_every_tokenizer() -> None:
    rows = spec_rows()
    assert [r["tokenizer"] for r in rows] == [s.label for s in TOKENIZERS.values()]
    assert rows[2]["same pieces as"].startswith("GPT-2, RoBERTa")


def test_family_rows_elide_long_texts_but_not_pairs() -> None:
    text = " ".join(f"w{i}" for i in range(30))
    fam = {f: family_tokens(f, text) for f in FAMILIES}
    pair = {f: family_tokens(f, "Sentence A.", "Sentence B.") for f in FAMILIES}
    rows = family_rows(fam, pair)
    assert [r["family"] for r in rows] == list(FAMILIES)
    bert = rows[0]["your text"].split(" ")
    assert len(bert) == 12 and bert[8] == "…" and bert[-1] == "[SEP]"
    assert rows[0]["sentence pair"] == "[CLS] sentence a . [SEP] sentence b . [SEP]"
    short = family_rows({"GPT-2": ("Hi",)}, {"GPT-2": ("a",)})
    assert short[0]["your text"] == "Hi" and short[0]["pieces from"] == "GPT-2 (byte-level BPE)"


def test_notices_say_what_is_drawn_and_where_each_model_cuts() -> None:
    text = "word " * 600
    results = compare(text, ["bert-base-uncased", "bigbird"])
    out = notices(results, len(text), max_chips=300)
    assert [n.kind for n in out] == ["info", "truncated"]  # only BERT's 512 is exceeded
    assert "first 300 tokens" in out[0].text
    assert out[1].text.startswith("BERT uncased (WordPiece): 602 tokens, but the model reads at most 512")
    assert all(isinstance(n, Notice) for n in out)
    assert notices(compare("short", ["gpt2"]), 5, max_chips=300) == ()
