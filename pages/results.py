"""Results: what each variant bought, as the papers report it, against what it costs here."""

from __future__ import annotations

import streamlit as st

from app import ui
from app.caches import results as cache
from app.views import results as results_view
from explorer.architecture import catalog
from explorer.papers import speed
from explorer.plots import results as plots

st.title("Published results")
others = "; ".join(f"{kind} for {', '.join(works)}" for kind, works in cache.sources_by_kind().items())
st.markdown(
    "Benchmark figures **as the papers report them** (every row names its source: the paper and its table, or, "
    f"where that is what could be read, {ui.markdown_safe(others)}), what each variant **cost to pretrain** (as its "
    "paper says), and what each architecture costs by **our own count** (parameters, forward FLOPs per token). A "
    "blank in a source's table is shown as *not reported*, never as a number."
)

with ui.guard():
    view = results_view.pick_view()
    if view == "glue":
        results_view.glue_section()
    elif view == "paper":
        results_view.paper_section()
    else:
        results_view.budgets_section()

st.divider()
st.subheader("Reproduced here: DistilBERT's Table 3")
st.markdown(
    "Sanh et al. (2019) time a full CPU pass over the STS-B dev set at batch size 1: **BERT-base 668 s, "
    "DistilBERT 410 s (1.63x)**. Here both are built from their published configs with **random weights**: "
    "a forward pass does the same arithmetic whatever the weights hold, so it takes the same time as the trained "
    "model. Both get the same token ids, one example at a time, timed in interleaved rounds (median). Any pair "
    "works: ALBERT-base vs BERT-base has 9x fewer parameters and the same compute."
)
with ui.guard():
    keys = catalog.keys()
    default = ui.query_list("speed", ["bert-base", "distilbert"], keys, limit=2)
    if len(default) < 2:
        default = ["bert-base", "distilbert"]
    a_col, b_col, n_col, r_col = st.columns([2, 2, 1, 1])
    first = a_col.selectbox("First", keys, index=keys.index(default[0]), key="speed_a")
    second = b_col.selectbox("Second", keys, index=keys.index(default[1]), key="speed_b")
    seq_len = n_col.number_input("Tokens", 1, speed.MAX_SEQ_LEN, speed.DEFAULT_SEQ_LEN, key="speed_len")
    runs = r_col.number_input("Rounds", 1, 100, 20, key="speed_runs")
    ui.set_query_list("speed", [first, second])
    if st.button("Measure on this machine (takes seconds)", key="speed_go", icon=":material/timer:"):
        with st.spinner("Building both models and timing interleaved rounds..."):
            result = cache.measure((first, second), int(seq_len), int(runs))
        cols = st.columns(3)
        for col, key, ms in zip(cols[:2], result.keys, result.ms_per_example, strict=True):
            col.metric(f"{catalog.get_variant(key).name}", f"{ms:.1f} ms / example")
        cols[2].metric("ratio (first / second)", f"{result.ratio:.2f}x",
                       help="Paper: 668 / 410 = 1.63x for BERT-base / DistilBERT")
        ui.figure(plots.speed_figure(result, speed.PAPER), "speed-ratio", key="speed_fig")
        flops = cache.costs(tuple(sorted({first, second})))
        st.caption(f"Our cost model's FLOPs-per-token ratio for this pair: {flops[first][1] / flops[second][1]:.2f}x. "
                   "The paper timed a whole STS-B pass (tokenization and data handling cost both models the same), "
                   "which likely pulls its ratio below the pure forward-pass one measured here.")

st.divider()
with ui.guard():
    results_view.lab_claims_section()
