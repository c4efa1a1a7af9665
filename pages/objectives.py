"""Objectives: what each pretraining objective feeds the model and what it must predict."""

from __future__ import annotations

import streamlit as st

from app import ui
from app.views import c4 as c4_view
from app.views import objectives as view
from explorer.core import limits
from explorer.objectives import GROUPS, STRATEGIES, Strategy
from explorer.objectives.text import EXAMPLE_TEXT, EXAMPLE_TRANSLATION, MAX_TOKENS, check_text


def inputs() -> tuple[str, str, Strategy, int]:
    """Text, translation (TLM), strategy (grouped) and seed; the strategy is kept in the URL."""
    left, right = st.columns([3, 2])
    text = left.text_area("Text", EXAMPLE_TEXT, height=120, max_chars=limits.OBJECTIVES_TEXT_CHARS, key="obj_text",
                          help=f"Cut to {MAX_TOKENS} tokens, like the models.")
    pair = left.text_input("Translation (XLM TLM only)", EXAMPLE_TRANSLATION, key="obj_pair")
    picked = ui.query_choice("strategy", list(STRATEGIES), "bert")
    group = right.selectbox("Family", GROUPS, index=GROUPS.index(STRATEGIES[picked].group), key="obj_group")
    names = [n for n, s in STRATEGIES.items() if s.group == group]
    name = right.selectbox("Strategy", names, index=names.index(picked) if picked in names else 0,
                           format_func=lambda n: STRATEGIES[n].label, key=f"obj_strategy_{group}")
    ui.set_query_list("strategy", [name])
    seed = int(right.number_input("Seed", 0, 2**31 - 1, 0, key="obj_seed"))
    return text, pair, STRATEGIES[name], seed


st.title("Pretraining objectives")
st.caption("What each model is trained to predict: type a text, pick an objective, see the model input, the "
           "targets and the statistics that define the objective over many random draws.")
text, pair, strategy, seed = inputs()
usable = False
with ui.guard():  # an empty or oversized text: one box here, not one per tab
    usable = bool(check_text(text))
if not usable:
    st.stop()
tab_one, tab_compare, tab_decode, tab_distill, tab_c4 = st.tabs(
    ["Objective", "Compare side by side", "Decoding", "Distillation", "Data: C4's cleaning"])
with tab_one, ui.guard():
    pair_or_none = pair if strategy.pair else None  # other strategies ignore it: keep it out of cache keys
    view.header(strategy, text, pair_or_none)
    opts = view.options(strategy)
    view.one_draw(strategy, text, pair_or_none, seed, opts)
    st.subheader("Over many draws")
    view.statistics(strategy, text, pair_or_none, seed, opts)
with tab_compare, ui.guard():
    view.compare(text, pair, seed)
with tab_decode:
    view.decoding(text, seed)
with tab_distill:
    view.distillation()
with tab_c4:
    c4_view.show()
