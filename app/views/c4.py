"""The Objectives page's data tab: T5's C4 cleaning applied to a pasted page and to the bundled corpus, with what
each rule removed (compute in ``explorer.training.c4``, display here)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app import ui
from app.caches import objectives as cache
from explorer.core import limits
from explorer.training import c4

SAMPLE = "\n\n".join([
    "Home | About | Contact\nPlease enable Javascript in your browser to view this site.\n"
    "The river flooded the village after the storm. Heavy rain had fallen for three days. The water rose over "
    "the fields before dawn. Families moved to the school on the hill. By noon the bridge was closed.\n"
    "Share this story",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit. Sed do eiusmod tempor. Ut enim ad minim veniam. "
    "Quis nostrud exercitation. Duis aute irure dolor.",
    "function init() { return loadPage(); } The page loads its widgets first. Then it shows the menu. Then it "
    "asks for your consent. Then it loads the article. Then it loads the comments.",
    "The river flooded the village after the storm. Heavy rain had fallen for three days. The water rose over "
    "the fields before dawn. Volunteers brought boats to carry the elderly. The mayor thanked them all.",
])  # written for this project: one page of each kind C4 drops or trims


def _table(report: c4.Report) -> go.Figure:
    """The per-rule table (shown) and its bar chart (returned)."""
    rows = [{"rule": r.rule, "lines removed": r.lines, "pages removed": r.pages, "characters": r.characters,
             "example": " | ".join(r.examples) if r.rule != "bad word" else ("(not shown)" if r.pages else "")}
            for r in report.removed]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"example": st.column_config.TextColumn(width="large")})
    fig = go.Figure(go.Bar(x=[r.characters for r in report.removed], y=[r.rule for r in report.removed],
                           orientation="h"))
    fig.update_layout(title=f"Characters each rule removed (kept {report.characters_kept:,} of "
                            f"{report.characters_in:,})", xaxis_title="characters", yaxis={"autorange": "reversed"})
    return fig


def show() -> None:
    """The tab: the rules, a pasted page cleaned, then the bundled corpus cleaned."""
    st.markdown("T5 was pretrained on **C4**, one month of Common Crawl (about 750 GB of English kept) cleaned by "
                "these rules, in order (Raffel et al. 2020, Sec. 2.2): keep lines ending in terminal punctuation; "
                "drop lines under 3 words and lines mentioning Javascript; drop pages under 5 sentences, pages with "
                "a word of the bad-words list, pages with *lorem ipsum* and pages with a curly bracket; keep one copy "
                "of any three-sentence span. Pages are blank-line-separated blocks.")
    text = st.text_area("A page of web text (or several, separated by blank lines)", SAMPLE, height=220,
                        key="c4_text", max_chars=limits.C4_PASTE_CHARS)
    with ui.guard():
        report = cache.c4_text(text)
        st.caption(f"{report.pages_kept} of {report.pages_in} pages kept · {report.characters_kept:,} of "
                   f"{report.characters_in:,} characters")
        ui.figure(_table(report), "c4-rules", key="c4_fig")
        with st.expander("What C4 keeps of it"):
            st.text(report.kept or "(nothing)")
        for note in report.notes:
            st.caption(note)
    st.markdown("**The bundled corpus** (the Python documentation the Pretraining lab trains on), one page per "
                "document: C4's rules would drop most code-bearing pages, and even a few pages of documentation "
                "for a word on the list.")
    with ui.guard():
        bundled = cache.c4_bundled()
        st.caption(f"{bundled.pages_kept} of {bundled.pages_in} documents kept · {bundled.characters_kept:,} of "
                   f"{bundled.characters_in:,} characters ({bundled.characters_kept / bundled.characters_in:.0%})")
        ui.figure(_table(bundled), "c4-bundled", key="c4_bundled_fig")
