"""Streamlit entry: page config, session defaults and navigation, nothing else.

``streamlit run app/main.py`` puts only ``app/`` on ``sys.path``; the repository root is
added here so that pages can ``import explorer`` and ``from app import ui``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app import ui  # noqa: E402

PAGES = ROOT / "pages"

# (file, title, icon, url path); grouped by section in the sidebar.
SECTIONS: dict[str, list[tuple[str, str, str, str]]] = {
    "Architecture": [
        ("home.py", "Overview", ":material/home:", "home"),
        ("architecture.py", "Architecture explorer", ":material/account_tree:", "architecture"),
        ("compare.py", "Compare variants", ":material/compare_arrows:", "compare"),
    ],
    "Pretraining": [
        ("tokenization.py", "Tokenizers", ":material/text_fields:", "tokenizers"),
        ("objectives.py", "Objectives", ":material/school:", "objectives"),
    ],
    "Attention": [
        ("attention_patterns.py", "Sparse patterns", ":material/grid_on:", "patterns"),
        ("attention_maps.py", "Attention maps", ":material/visibility:", "attention"),
    ],
    "Live models": [
        ("models.py", "Models & weights", ":material/download:", "models"),
        ("fill_mask.py", "Fill-mask", ":material/edit_note:", "fill-mask"),
        ("spans.py", "Spans & QA", ":material/short_text:", "spans"),
        ("similarity.py", "Sentence similarity", ":material/join_inner:", "similarity"),
    ],
}


def _navigation() -> st.navigation:
    nav = {}
    for section, pages in SECTIONS.items():
        nav[section] = [
            st.Page(str(PAGES / f), title=t, icon=i, url_path=u, default=(u == "home"))
            for f, t, i, u in pages
        ]
    return st.navigation(nav)


st.set_page_config(page_title="Transformer Explorer", page_icon=":material/hub:", layout="wide")
ui.init_session_state()
_navigation().run()
