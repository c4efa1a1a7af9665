"""Cached wrappers of the tokenization area (the only Streamlit caching for it).

The tokenizers themselves are cached once per process by the library (``load_tokenizer`` is
lru-cached: five small objects, shared and never mutated), so only results are cached here,
keyed by the text and the tuple of tokenizer names. ExplorerErrors are not cached: they
propagate to ``ui.guard``.
"""

from __future__ import annotations

import streamlit as st

from explorer import tokenization as tk
from explorer.tokenization import registry, specials


@st.cache_data(max_entries=32, show_spinner=False)
def compare(text: str, names: tuple[str, ...]) -> list[tk.Tokenization]:
    """``text`` through every tokenizer in ``names`` (see explorer.tokenization.compare)."""
    return tk.compare(text, names)


@st.cache_data(max_entries=32, show_spinner=False)
def family_tokens(text: str) -> dict[str, tuple[str, ...]]:
    """Tokens each model family sees for ``text`` (its own special tokens included)."""
    return {family: specials.family_tokens(family, text) for family in specials.FAMILIES}


@st.cache_data(max_entries=1, show_spinner=False)
def family_pairs() -> dict[str, tuple[str, ...]]:
    """How each family lays out a sentence pair ("Sentence A." + "Sentence B.")."""
    return {family: specials.family_tokens(family, "Sentence A.", "Sentence B.") for family in specials.FAMILIES}


@st.cache_data(max_entries=1, show_spinner=False)
def variant_tokenizers() -> list[registry.VariantTokenizer]:
    """Which tokenizer the app uses for every catalog variant."""
    return registry.variant_tokenizers()
