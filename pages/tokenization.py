"""Tokenizers: one text through WordPiece, byte-level BPE and SentencePiece, side by side."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import ui
from app.caches import serving as cache_serving
from app.caches import tokenization as cache
from app.views import served_picker
from explorer import tokenization as tk
from explorer.core import limits
from explorer.core.errors import ExplorerError
from explorer.plots import tokenization as plots
from explorer.tokenization import split, table

MAX_CHIPS = 300  # chips per tokenizer; longer texts are still counted in full
MAX_ROWS = 2_000  # table rows per tokenizer on screen (the CSV has them all)


def _load_preset() -> None:
    st.session_state["tok_text"] = tk.PRESETS[st.session_state["tok_preset"]]


def _inputs() -> tuple[str, list[str]]:
    """The text box, the example picker and the tokenizer choice (kept in the URL)."""
    st.session_state.setdefault("tok_text", tk.PRESETS[table.DEFAULT_PRESET])
    left, right = st.columns([3, 2])
    with right:
        st.selectbox("Example", list(tk.PRESETS), key="tok_preset", on_change=_load_preset,
                     help="Rare words, misspellings, new words, emoji, numbers, other scripts, code.")
        every = list(tk.TOKENIZERS)
        names = st.multiselect("Tokenizers", every, default=ui.query_list("tokenizers", every, every),
                               format_func=lambda n: tk.TOKENIZERS[n].label, key="tok_names")
        ui.set_query_list("tokenizers", names)
    with left:
        text = st.text_area("Text", key="tok_text", height=130, max_chars=limits.TOKENIZATION_TEXT_CHARS)
    return text, names


def _notices(results: list[tk.Tokenization], n_chars: int) -> None:
    """Long text: how much is drawn, and where each model would cut (numbers only, no user text)."""
    ui.notices(table.notices(results, n_chars, MAX_CHIPS))
    for col, t in zip(st.columns(max(len(results), 1)), results, strict=False):
        col.metric(tk.label_of(t.name), f"{t.count:,} tokens",
                   help=f"{t.count - t.n_special} text + {t.n_special} special; "
                        f"{t.fertility:.2f} tokens per word; {len(t.unknown)} unknown")


def _chips(results: list[tk.Tokenization]) -> None:
    st.caption("A gap starts a new word; pieces of the same word touch. Purple: special token the "
               "tokenizer adds. Red: unknown piece. Hover a chip for its id and character span. "
               "GPT-2 pieces are bytes: ␣ is a space, `<F0 9F>` are bytes of one character split apart.")
    for t in results:
        spec = tk.TOKENIZERS.get(t.name)
        how = spec.continuation if spec else "Its server's own tokenizer, asked through the server's tokenize route"
        st.markdown(f"**{ui.markdown_safe(tk.label_of(t.name))}**: {t.count:,} tokens, {t.fertility:.2f} per word, "
                    f"{len(t.unknown)} unknown. {how}.")
        st.html(plots.chips_html(t, MAX_CHIPS))


def _special_tokens(text: str) -> None:
    st.caption("What each family wraps around one text, and around a pair of sentences. RoBERTa, "
               "BART and Longformer split text exactly like GPT-2 (same merges) but add `<s>` … `</s>`; "
               "their ids differ from GPT-2's because their vocabulary is renumbered.")
    rows = table.family_rows(cache.family_tokens(text), cache.family_pairs())
    wide = st.column_config.TextColumn(width="large")
    st.dataframe(pd.DataFrame(rows), hide_index=True, column_config={"your text": wide, "sentence pair": wide})


def _variants() -> None:
    st.caption("The tokenizer each catalog variant is shown with. Where a variant's own vocabulary "
               "file is not shipped, the note says which shipped tokenizer stands in.")
    try:
        rows = [v.to_dict() for v in cache.variant_tokenizers()]
        st.dataframe(pd.DataFrame(rows).rename(columns={"own": "its own tokenizer"}), hide_index=True,
                     column_config={"note": st.column_config.TextColumn(width="large")})
    except ExplorerError as err:
        st.info(f"The variant catalog is not available yet ({err}).")
    st.dataframe(pd.DataFrame(table.spec_rows()), hide_index=True)


def _served(text: str) -> list[tk.Tokenization]:
    """The served models' own tokenizers, asked of their servers (each failure said, the others go on)."""
    out = []
    for ep in served_picker.pick("tok", "tokenizer", "its own tokenization"):
        with ui.guard():
            got = cache_serving.tokens(ep, split.check_text(text))
            ui.notices(got.notices)
            out.append(got.tokenization)
    return out


def _page() -> None:
    """The page, top to bottom: inputs, notices, then one tab per view."""
    st.title("Tokenizers")
    st.caption("Models never see characters: they see vocabulary pieces. Type a text and compare how "
               "WordPiece (BERT), byte-level BPE (GPT-2, and the same merges in RoBERTa, BART, Longformer) "
               "and SentencePiece (T5, BigBird) split it, using the published vocabulary files.")
    text, names = _inputs()
    with ui.guard():
        with st.spinner("Tokenizing…"):
            results = cache.compare(text, tuple(names)) + _served(text)
        _notices(results, len(text))
        tabs = st.tabs(["Tokens", "Counts & fertility", "Word by word", "Special tokens",
                        "Which model uses which", "Table & export"])
        with tabs[0]:
            _chips(results)
        with tabs[1]:
            ui.figure(plots.counts_figure(results), "token_counts")
            ui.figure(plots.fertility_figure(results), "fertility")
        with tabs[2]:
            ui.figure(plots.word_split_figure(results), "word_splits")
            st.dataframe(pd.DataFrame(table.word_split_rows(results, max_words=200)), hide_index=True)
        with tabs[3]:
            _special_tokens(text)
        with tabs[4]:
            _variants()
        with tabs[5]:
            st.dataframe(pd.DataFrame(table.summary_rows(results)), hide_index=True)
            if any(t.count > MAX_ROWS for t in results):
                st.caption(f"The table shows the first {MAX_ROWS:,} tokens of each tokenizer; the CSV has all.")
            st.dataframe(pd.DataFrame(table.token_rows(results, MAX_ROWS)), hide_index=True, height=320)
            ui.csv_download(pd.DataFrame(table.token_rows(results)), "tokens", "Download all tokens (CSV)")


_page()
