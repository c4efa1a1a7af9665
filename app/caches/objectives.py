"""Cached wrappers of the objectives area (the only Streamlit caching for it).

Arguments are plain hashable values (text, names, seeds); the tokenizers and replacement
vocabularies are cached once per process by the library (lru_cache, never mutated).
ExplorerErrors are not cached: they propagate to ``ui.guard``.
"""

from __future__ import annotations

import streamlit as st

from explorer import objectives as obj
from explorer.objectives import decoding, distill, mlm, stats
from explorer.objectives.base import ObjectiveResult
from explorer.objectives.text import Prepared, prepare
from explorer.training import c4


@st.cache_data(max_entries=64, show_spinner=False)
def prepared(name: str, text: str, pair: str | None) -> Prepared:
    """``text`` tokenized and framed the way strategy ``name``'s model did it."""
    s = obj.get_strategy(name)
    return prepare(text, s.tokenizer, s.frame, pair if s.pair else None)


@st.cache_data(max_entries=128, show_spinner=False)
def result(name: str, text: str, pair: str | None, seed: int, epoch: int = 0,
           options: tuple[tuple[str, object], ...] = ()) -> ObjectiveResult:
    """One draw of strategy ``name`` (a frozen result dataclass); ``options``: (keyword, value) pairs."""
    p = prepared(name, text, pair)
    return obj.run(name, p.tokens, seed, p.vocab, epoch=epoch, **dict(options))


@st.cache_data(max_entries=32, show_spinner=False)
def draw_stats(name: str, text: str, pair: str | None, seed: int, n_draws: int,
               options: tuple[tuple[str, object], ...] = ()) -> stats.DrawStats:
    """The strategy's statistics over ``n_draws`` draws."""
    p = prepared(name, text, pair)
    return stats.draw_stats(name, p.tokens, p.vocab, seed, n_draws, **dict(options))


@st.cache_data(max_entries=16, show_spinner=False)
def epochs(text: str, seed: int, n_epochs: int) -> tuple[tuple, tuple]:
    """(dynamic, static) RoBERTa masks over ``n_epochs`` epochs."""
    p = prepared("roberta", text, None)
    return (mlm.masking_over_epochs(p.tokens, p.vocab, seed, n_epochs, True),
            mlm.masking_over_epochs(p.tokens, p.vocab, seed, n_epochs, False))


@st.cache_data(max_entries=64, show_spinner=False)
def decode(table: tuple[tuple[str, float], ...], method: str, temperature: float, top_k: int,
           seed: int, n: int) -> decoding.DecodingResult:
    """``n`` choices from the next-token ``table`` by ``method`` (the table as (token, p) pairs)."""
    return decoding.decode(dict(table), method, mlm.epoch_rng(seed, 0), temperature, top_k, n)


@st.cache_data(max_entries=32, show_spinner=False)
def generate(text: str, steps: int, method: str, temperature: float, top_k: int, seed: int) -> tuple[str, ...]:
    """A continuation of the text's first GPT-2 piece by the bigram model counted from the text."""
    p = prepared("gpt-clm", text, None)
    return decoding.continue_text(p.tokens, steps, method, mlm.epoch_rng(seed, 0), temperature, top_k)


@st.cache_data(max_entries=64, show_spinner=False)
def distillation(temperature: float, alpha: float, skill: float) -> distill.DistillResult:
    """The example distillation loss with a student ``skill`` of the way to the teacher."""
    return distill.example_loss(temperature, alpha, skill)


@st.cache_data(max_entries=2, show_spinner="Cleaning the bundled corpus with C4's rules…")
def c4_bundled() -> c4.Report:
    """The pretraining lab's bundled corpus through C4's cleaning rules (about 1.5 s, once per process)."""
    return c4.clean_bundled()


@st.cache_data(max_entries=16, show_spinner=False)
def c4_text(text: str) -> c4.Report:
    """A pasted text (blank-line-separated pages) through C4's cleaning rules."""
    return c4.clean(text)
