"""The Mechanisms page's text-to-text tab: T5's prefixes, CTRL's control codes and M2M-100's language tokens laid
out as the models see them (every layout from explorer.papers.mechanisms.text2text through the cached wrappers)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import ui
from app.caches import mechanisms as cache
from explorer.papers.mechanisms import text2text
from explorer.plots import mechanisms as plots

__all__ = ["show"]


def show_layout(rows: dict, title: str, name: str) -> None:
    ui.figure(plots.layout_strip(rows, title), name, key=f"mech_{name}")
    table = pd.concat([pd.DataFrame(layout.rows()).assign(sequence=seq) for seq, layout in rows.items()])
    with st.expander("Tokens and ids"):
        st.dataframe(table, hide_index=True)
        ui.csv_download(table, name, key=f"mech_{name}_csv")


def show() -> None:
    """The tab: T5, then CTRL, then M2M-100, each a strip of pieces and ids with its table."""
    st.subheader("T5: every task is text in, text out")
    ui.seed_from_url("mech_task", "task", list(text2text.T5_TASKS))
    task = text2text.T5_TASKS[st.selectbox("Task", list(text2text.T5_TASKS), key="mech_task")]
    st.query_params["task"] = task.name
    source = st.text_area(f"Input (after the prefix “{task.prefix}”)", task.example_input, key=f"mech_t5_{task.name}")
    target = st.text_input("Label as text", task.example_target, key=f"mech_t5_label_{task.name}")
    with ui.guard():
        t5 = cache.t5(task.name, source, target)
        show_layout({"encoder input": t5.encoder, "labels": t5.labels}, f"T5 ({task.name})", "t5_layout")
    st.subheader("CTRL: a control code first")
    codes = text2text.ctrl_codes()
    ui.seed_from_url("mech_code", "code", codes)
    code = st.selectbox("Control code", codes, key="mech_code")
    st.query_params["code"] = code
    text = st.text_input("Text after the code", text2text.CTRL_EXAMPLES.get(code, "A knife"), key=f"mech_ctrl_{code}")
    with ui.guard():
        ctrl = cache.ctrl(code, text)
        st.caption(f"The code's id {ctrl.code_id:,} is CTRL's own; CTRL's fastBPE vocabulary is not shipped, so "
                   "GPT-2's byte-level BPE stands in for the pieces after it (their ids are GPT-2's).")
        show_layout({"CTRL input": ctrl.layout}, f"CTRL: {code}", "ctrl_layout")
    st.subheader("M2M-100: language tokens")
    langs = list(text2text.M2M_LANGUAGES)
    c1, c2 = st.columns(2)
    src = c1.selectbox("Source language", langs, index=langs.index(ui.query_choice("src", langs, "en")), key="mech_src")
    tgt = c2.selectbox("Target language", langs, index=langs.index(ui.query_choice("tgt", langs, "fr")), key="mech_tgt")
    st.query_params.update(src=src, tgt=tgt)
    source = c1.text_input("Source sentence", "Life is like a box of chocolates.", key="mech_m2m_source")
    target = c2.text_input("Target sentence", "La vie est comme une boîte de chocolat.", key="mech_m2m_target")
    with ui.guard():
        m2m = cache.m2m(src, tgt, source, target)
        st.caption("The source starts with its language token; the decoder starts from </s> and generation forces "
                   "the target language token first (forced_bos_token_id). M2M-100's SentencePiece is not shipped: "
                   "T5's stands in for the pieces, whose M2M-100 ids are unknown (?).")
        show_layout({"encoder input": m2m.encoder, "decoder input": m2m.decoder, "labels": m2m.labels},
                    f"M2M-100 {src} → {tgt}", "m2m_layout")
