"""What the tokenizers page and the CSV export show: example texts, table rows and notices.

Rows are plain dicts (one per tokenizer, token, word or family) ready for a DataFrame; user text
in them is cut short where one huge "word" would otherwise repeat on thousands of rows.

>>> from explorer.tokenization.split import compare
>>> rows = summary_rows(compare("Hello world", ["gpt2"]))
>>> rows[0]["tokens"], rows[0]["tokens per word"]
(2, 1.0)
>>> join_pieces(["goo", "##oo", "##ood"], limit=2)
'goo ##oo … (3 pieces)'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from explorer.core.notices import Notice
from explorer.tokenization.registry import TOKENIZERS, algorithm_of, label_of
from explorer.tokenization.specials import FAMILIES
from explorer.tokenization.split import Tokenization

__all__ = [
    "DEFAULT_PRESET", "PRESETS", "family_rows", "join_pieces", "notices", "spec_rows", "summary_rows",
    "token_rows", "word_split_rows",
]

PRESETS: dict[str, str] = {
    "Rare words & misspellings": "The soup was taaaaasty, but I still need to laern how to Transformerify my code.",
    "New words": "Doomscrolling, rizz and ChatGPT were not words when BERT was trained in 2018.",
    "Emoji": "I love pizza 🍕😂 and thumbs up 👍🏽 so much!!!",
    "Numbers": "In 2024, 3.14159 × 1,000,000 = 3141590 and 12345678901234567890 is long.",
    "Non-English": "Ich heiße Müller. 東京は大きい都市です。 Москва — столица России.",
    "Right-to-left": "שלום עולם and مرحبا بالعالم mixed with English.",
    "Code": "def square(x):\n    return x ** 2  # TODO: vectorize()",
    "HTML tags": "<script>alert('hi')</script> <b>bold</b> &amp; more",
}
DEFAULT_PRESET = "Rare words & misspellings"


def summary_rows(results: Sequence[Tokenization]) -> list[dict[str, object]]:
    """One row per tokenizer: counts, fertility, unknown pieces and where truncation cuts."""
    rows = []
    for t in results:
        rows.append({
            "tokenizer": t.name, "algorithm": algorithm_of(t.name), "tokens": t.count,
            "text tokens": t.count - t.n_special, "special tokens": t.n_special,
            "words": len(t.words), "tokens per word": round(t.fertility, 2),
            "unknown": len(t.unknown), "limit": t.max_length,
            "cut at character": t.truncated_at,
        })
    return rows


def _short(word: str, limit: int = 40) -> str:
    """A word cut to ``limit`` characters: one 50,000-character "word" must not be repeated
    on each of its thousands of token rows (that made a 200 MB CSV)."""
    return word if len(word) <= limit else word[: limit - 1] + "…"


def join_pieces(pieces: Sequence[str], limit: int = 30, sep: str = " ") -> str:
    """The pieces of one word for display, at most ``limit`` of them."""
    shown = sep.join(pieces[:limit])
    return shown if len(pieces) <= limit else f"{shown}{sep}… ({len(pieces):,} pieces)"


def token_rows(results: Sequence[Tokenization], max_tokens: int | None = None) -> list[dict[str, object]]:
    """One row per token per tokenizer (the CSV export), at most ``max_tokens`` per tokenizer."""
    rows = []
    for t in results:
        stop = t.count if max_tokens is None else min(t.count, max_tokens)
        unknown = set(t.unknown)
        for i in range(stop):
            w = t.word_index[i]
            rows.append({
                "tokenizer": t.name, "position": i, "token": t.tokens[i], "piece": t.pieces[i],
                "id": t.ids[i], "start": t.offsets[i][0], "end": t.offsets[i][1],
                "special": t.special[i], "starts word": t.word_start[i],
                "word #": w, "word": _short(t.words[w]) if w is not None else None,
                "unknown": i in unknown,
            })
    return rows


def word_split_rows(results: Sequence[Tokenization], max_words: int = 40) -> list[dict[str, object]]:
    """The first ``max_words`` words with their pieces under each tokenizer (the fertility view)."""
    if not results:
        return []
    pieces = {t.name: t.word_pieces() for t in results}
    words = results[0].words  # same whitespace words for every tokenizer
    return [{"word": _short(words[w]), **{n: join_pieces(p[w]) for n, p in pieces.items()},
             **{f"{n} pieces": len(p[w]) for n, p in pieces.items()}} for w in range(min(len(words), max_words))]


def spec_rows() -> list[dict[str, object]]:
    """One row per shipped tokenizer: algorithm, position limit, families with the same pieces."""
    return [{"tokenizer": s.label, "algorithm": s.algorithm, "limit": s.model_max_length,
             "same pieces as": ", ".join(s.shared_by)} for s in TOKENIZERS.values()]


def _elide(tokens: Sequence[str], head: int = 8, tail: int = 3) -> str:
    """A long token list as its first ``head`` and last ``tail`` tokens around "…"."""
    shown = tokens if len(tokens) <= head + tail + 1 else (*tokens[:head], "…", *tokens[-tail:])
    return " ".join(shown)


def family_rows(text_tokens: Mapping[str, Sequence[str]], pair_tokens: Mapping[str, Sequence[str]]
                ) -> list[dict[str, object]]:
    """One row per model family: whose pieces it uses, its tokens for a text and for a pair."""
    return [{"family": f, "pieces from": TOKENIZERS[FAMILIES[f]].label, "your text": _elide(toks),
             "sentence pair": " ".join(pair_tokens[f])} for f, toks in text_tokens.items()]


def notices(results: Sequence[Tokenization], n_chars: int, max_chips: int) -> tuple[Notice, ...]:
    """What to say about long texts: chips drawn in part, and where each model would cut."""
    out = []
    if any(t.count > max_chips for t in results):
        out.append(Notice("info", f"Long text: every token is counted, but only the first {max_chips} tokens "
                                  "of each tokenizer are drawn as chips (the CSV export has them all)."))
    out += [Notice("truncated", f"{label_of(t.name)}: {t.count:,} tokens, but the model reads at most "
                                f"{t.max_length:,}; it would cut the text at character {t.truncated_at:,} of "
                                f"{n_chars:,} (marked ✂ in the chips).")
            for t in results if t.truncated_at is not None]
    return tuple(out)
