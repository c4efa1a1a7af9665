"""Sparse patterns: who may attend to whom in each variant, drawn from its config, and what it costs."""

from __future__ import annotations

import streamlit as st

from app import ui
from app.caches import patterns as cache
from app.views import patterns as view
from explorer.architecture.patterns import variants
from explorer.core import limits, userinput
from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice

DEFAULT_VARIANTS = ("bert-base", "gpt2", "longformer", "bigbird", "gpt-neo", "t5-base")


def pick_variants() -> list[str]:
    names = cache.variant_names()
    default = [k for k in DEFAULT_VARIANTS if k in names] or list(names)[:4]
    picked = st.multiselect("Variants", list(names), default=ui.query_list("variants", default, list(names)),
                            format_func=lambda k: names[k], key="patterns_variants")
    ui.set_query_list("variants", picked)
    return picked


def settings(picked: list[str]) -> view.Settings:
    """Length, layer, seed, resolution, Longformer's globals and dilation, encoder-decoder parts."""
    c1, c2, c3, c4 = st.columns(4)
    seq_len = int(c1.number_input("Sequence length (tokens)", 1, 16_384, ui.query_int("len", 1024, 1, 16_384), step=64,
                                  key="patterns_len", help="Try 704 vs 705 for BigBird: at or below (5 + 2 x 3) x 64 "
                                                           "it runs full attention."))
    top = max([cache.layer_count(k) for k in picked] or [1]) - 1
    layer = int(c2.number_input("Layer (alternating / per-layer patterns)", 0, top, ui.query_int("layer", 0, 0, top),
                                key="patterns_layer",
                                help="GPT-Neo and GPT-3 alternate global (even) and local (odd) layers."))
    seed = int(c3.number_input("BigBird seed (random blocks)", 0, 2**31 - 1, ui.query_int("seed", 0, 0, 2**31 - 1),
                               key="patterns_seed"))
    cells = int(c4.select_slider("Diagram resolution (cells per side)", [128, 256, 512], 256, key="patterns_cells",
                                 help="Longer inputs are max-pooled to this many cells; the figure says so."))
    g1, g2, g3 = st.columns([2, 1, 1])
    linked = st.query_params.get("globals", "")
    glob_text = g1.text_input("Longformer global tokens (positions, e.g. 5, 17)", linked[: limits.POSITIONS_LIST_CHARS],
                              max_chars=limits.POSITIONS_LIST_CHARS, key="patterns_globals",
                              help=f"[CLS] (position 0) is always global; add question tokens here (at most "
                                   f"{limits.POSITIONS_LIST_CHARS:,} characters: the box cuts a longer paste).")
    if len(linked) > limits.POSITIONS_LIST_CHARS:  # a hand-made link: say what was cut, never drop it silently
        ui.notice(Notice("truncated", f"The link's global positions were {len(linked):,} characters long; the box "
                                      f"keeps the first {limits.POSITIONS_LIST_CHARS:,}."))
    dilation = int(g2.number_input("Longformer dilation", 1, 8, ui.query_int("dilation", 1, 1, 8),
                                   key="patterns_dilation",
                                   help="Dilated windows skip keys to reach further with the same cost (the paper "
                                        "uses them in some heads; the released config has none)."))
    parts = g3.pills("Encoder-decoder parts", variants.ENCODER_DECODER_PARTS, selection_mode="multi",
                     default=list(variants.ENCODER_DECODER_PARTS), key="patterns_parts")
    globals_: tuple[int, ...] = ()
    try:
        globals_ = userinput.parse_positions(glob_text, seq_len)
    except ExplorerError as err:
        if glob_text == linked[: limits.POSITIONS_LIST_CHARS]:  # from a link: dropped with a notice, as elsewhere
            ui.notice(Notice("dropped", f"The link's global positions were left out: {err}"))
        else:  # typed in the box: the user's own input, said in red
            st.error(ui.markdown_safe(str(err)), icon=":material/error:")
    if not glob_text.strip():
        st.caption("Only [CLS] (position 0) is a global token in Longformer.")
    st.query_params.update({"len": str(seq_len), "layer": str(layer), "seed": str(seed), "dilation": str(dilation),
                            "globals": ",".join(map(str, globals_))})
    return view.Settings(seq_len, layer, seed, cells, dilation, globals_, tuple(parts or ()))


st.title("Sparse attention patterns")
st.caption("Who may attend to whom, built from each variant's published config (no weights needed). "
           "Blue = the query token (row) may attend to the key token (column).")
picked = pick_variants()
s = settings(picked)
if not picked:
    st.info("Pick at least one variant above.")
else:
    view.cost_table(view.diagrams(picked, s), s.seq_len)
    view.scaling(picked, s)
