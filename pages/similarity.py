"""Sentence similarity: bi-encoder matrix and search, ColBERT late interaction, ColBERTv2 compression."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pandas as pd
import streamlit as st

from app import ui
from app.caches import similarity as cache
from app.views import device_picker, served_picker
from app.views import sbert as sbert_view
from explorer.core.errors import ExplorerError
from explorer.core.labels import safe_label
from explorer.core.notices import Notice
from explorer.plots import similarity as plots
from explorer.runtime.resolve import resolve
from explorer.serving import backend
from explorer.serving.backend import Backend
from explorer.tasks.colbert import RATIO_NOTE, encoder_ref
from explorer.tasks.similarity import BI_ENCODER

EXAMPLE = "\n".join([
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "Two men pushed carts through the woods.",
    "A man is riding a white horse on an enclosed ground.",
    "A monkey is playing drums.",
])
STAND_IN = Notice("stand-in", "Stand-in token vectors (no ColBERT checkpoint present): see the late interaction tab.")


@contextlib.contextmanager
def panel(model: Backend, what: str, first: bool) -> Iterator[None]:
    """One model's panel: the typed model's first (a failure is an error box), each other one below it in a box of
    its own, named (a failure is one warning there, and the page goes on)."""
    if first:
        with ui.guard():
            yield
        return
    with st.container(border=True):
        st.markdown(f"**{ui.markdown_safe(model.shown)}**")
        try:
            yield
        except ExplorerError as err:
            st.warning(ui.markdown_safe(f"{model.shown} could not {what}: {err}"), icon=":material/cloud_off:")


where = device_picker.pick().kwargs()  # the sidebar's device and precision: every wrapper below takes them
st.title("Sentence similarity")
st.caption("Bi-encoder (Sentence-BERT): one mean-pooled, normalised vector per sentence, compared by cosine. "
           "Late interaction (ColBERT): one vector per token, scored by MaxSim.")

typed = st.text_input("Bi-encoder model (catalog key or directory)", value=BI_ENCODER, key="sim_model",
                      help="The bundled all-MiniLM-L6-v2 is `sentence-bert`; a directory saved with "
                           "save_pretrained also works.").strip() or BI_ENCODER
trained = cache.lab_encoders()  # encoders the pretraining lab saved: "lab/NAME: trained here (N steps on M words)"
model = (st.selectbox("Or a model trained here (pretraining lab)", list(trained), index=None, key="sim_lab",
                      format_func=lambda k: trained.get(k, k), placeholder="Pick a lab model")
         if trained else None) or typed
limit = cache.sentence_limit(where["device"])
text = st.text_area("Sentences, one per line", value=EXAMPLE, height=200, key="sim_text",
                    help=f"Up to {limit} sentences (what one request embeds in this server's time); empty lines and "
                         "duplicates are dropped (you are told which).")
query = st.text_input("Query", value="A man is eating pasta.", key="sim_query")
served = served_picker.pick("similarity", "embeddings", "sentence embeddings")  # each beside the local model
ui.page_link("why.py", "Explain this prediction", text=query, pair=text.strip().split("\n")[0], models=model)
ref = resolve(model)  # once: every tab's cache is keyed on it (its stamp changes with the weights)
models: list[Backend] = [backend.model(ref, **where), *map(backend.served, served)]  # the typed one, then served

lines = None
with ui.guard():  # one message for a bad list, instead of one per tab
    lines = cache.clean_lines(text, limit)
if lines is None:
    st.stop()
ui.notices(lines.notices, ("dropped",))  # empty and duplicate lines, once for every tab

t_matrix, t_search, t_late, t_comp, t_sbert = st.tabs(
    ["Similarity matrix", "Search", "Late interaction (ColBERT)", "Compression (ColBERTv2)",
     "Pooling & objectives (Sentence-BERT)"])

with t_matrix:
    for i, each in enumerate(models):
        tag = "" if i == 0 else f"_{i}"  # keys and file names: the typed model's as before, then numbered
        with panel(each, "embed the sentences", first=i == 0):
            res = cache.matrix(each, text)
            ui.notices(res.notices, ("truncated", "info", "stopped"))  # stopped: the sentences embedded in time
            if res.untrained:
                ui.notice(ui.UNTRAINED)
            st.caption(f"{len(res.sentences)} sentences · {res.dim}-d embeddings · {device_picker.ran_caption(res)} · "
                       f"{res.seconds * 1000:.0f} ms")
            ui.figure(plots.similarity_heatmap(res), f"similarity_matrix{tag}", key=f"sim_heatmap{tag}")
            ui.csv_download(pd.DataFrame(res.matrix, columns=res.sentences, index=res.sentences).reset_index(
                names="sentence"), f"similarity_matrix{tag}", key=f"sim_matrix_csv{tag}")

with t_search:
    for i, each in enumerate(models):
        tag = "" if i == 0 else f"_{i}"
        with panel(each, "rank the sentences", first=i == 0):
            hits = cache.search(each, query, text)
            st.caption(f"{len(hits.hits)} sentences ranked · {device_picker.ran_caption(hits)} · "
                       f"{hits.seconds * 1000:.0f} ms")
            ui.figure(plots.search_bars(hits), f"search{tag}", key=f"sim_search_fig{tag}")
            table = pd.DataFrame([h.__dict__ for h in hits.hits])[["rank", "score", "sentence"]]
            st.dataframe(table, hide_index=True, width="stretch", key=f"sim_search_table{tag}")
            ui.csv_download(table, f"search{tag}", key=f"sim_search_csv{tag}")

encoder = encoder_ref()  # ColBERT when its checkpoint is on disk, else the stand-in: once, both tabs key on it

with t_late, ui.guard():
    ranking = cache.late_ranking(encoder, resolve(BI_ENCODER), query, text, **where)
    ui.notices(ranking.notices, ("stand-in", "truncated"))
    st.caption(f"Encoder: {ranking.encoder} · Kendall tau vs bi-encoder: {ranking.kendall_tau:.2f} · "
               f"{device_picker.ran_caption(ranking)}")
    docs = [d.text for d in ranking.docs]
    pick = st.selectbox("Document to inspect token by token", docs, key="sim_late_doc")
    m = cache.maxsim(encoder, query, pick, **where)
    ui.figure(plots.maxsim_heatmap(m, f"MaxSim, {safe_label(ranking.encoder, 80)}"), "maxsim", key="sim_maxsim_fig")
    ui.figure(plots.ranking_slope(ranking), "rankings", key="sim_rank_fig")
    late = pd.DataFrame([d.__dict__ for d in ranking.docs])
    st.dataframe(late, hide_index=True, width="stretch")
    ui.csv_download(late, "late_interaction", key="sim_late_csv")

with t_comp, ui.guard():
    c1, c2 = st.columns(2)
    k = c1.number_input("Centroids (0 = automatic)", min_value=0, max_value=512, value=0, step=1, key="sim_k")
    seed = c2.number_input("k-means seed", min_value=0, max_value=10_000, value=0, step=1, key="sim_seed")
    study = cache.compression(encoder, query, text, int(k), int(seed), 3, **where)
    if study.stand_in:
        ui.notice(STAND_IN)
    st.caption(f"{study.n_tokens} document token vectors · {study.dim}-d · {study.k} centroids "
               f"(table: {study.centroid_table_bytes:,} bytes, paid once per index) · "
               f"{device_picker.ran_caption(study)}")
    ui.figure(plots.compression_figure(study), "compression", key="sim_comp_fig")
    report = pd.DataFrame([{k: v for k, v in r.__dict__.items() if k != "scores"} for r in study.reports])
    st.dataframe(report, hide_index=True, width="stretch")
    st.caption(RATIO_NOTE)
    ui.csv_download(report, "compression", key="sim_comp_csv")

with t_sbert:
    sbert_view.show(ref, where)
