"""Spans & QA: a decoder, T5 and BART fill spans side by side; question answering, generative or extractive."""

from __future__ import annotations

import streamlit as st

from app import ui
from app.caches import spans as cache
from app.caches.models import models_dir
from app.views import device_picker, served_picker
from app.views import spans as view
from explorer.core.userinput import SPAN_MARKER, first_blank_only
from explorer.runtime.resolve import resolve
from explorer.serving import backend
from explorer.serving.backend import Backend
from explorer.tasks import infill, qa

PROMPT = "Thank you ___ me to your party ___ week."
QUESTION = "When was the Eiffel Tower built?"
CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is "
           "named after the engineer Gustave Eiffel, whose company designed and built the tower from 1887 "
           "to 1889 as the centerpiece of the 1889 World's Fair.")
OTHER = "other (type below)"

where = device_picker.pick().kwargs()  # the sidebar's device and precision, part of every cache key
st.title("Spans & QA")
random_weights = st.toggle("Untrained weights (random) instead of real ones", value=False, key="spans_random",
                           help="Shows every code path without a download. Nothing a random model says "
                                "is meaningful: its results are labelled UNTRAINED.")
directory = models_dir()  # typed on the Models page, else EXPLORER_MODELS_DIR
served = served_picker.pick("spans", "prompt_logprobs", "span infilling and question answering (whole-text scoring)")
t_infill, t_qa = st.tabs(["Span infilling (decoder, T5, BART)", "Question answering"])

with t_infill:
    st.caption("Mark each missing span with ___ . The decoder (Gemma 3 270M, bundled) continues the text before "
               "each blank and ranks its answers by the likelihood of the whole text; T5 gets sentinels "
               "(<extra_id_0>, ...) and answers with the spans only; BART gets <mask> and rewrites the whole "
               "text, whose new words are then located.")
    prompt = st.text_area("Prompt", value=PROMPT, key="spans_prompt", height=90)
    keys, labels = cache.infill_keys(directory), cache.lab_labels(directory)  # lab/NAME: trained here
    picked = st.multiselect("Models", keys, default=ui.query_list("models", cache.default_models(directory), keys),
                            key="spans_models", format_func=lambda k: labels.get(k, k))
    ui.set_query_list("models", picked)  # selections travel in the link
    extra = st.text_input("Or a directory saved with save_pretrained (decoder, T5 or BART)", key="spans_dir").strip()
    max_new = st.slider("Max new tokens per blank", 1, 64, ui.query_int("max_new", 20, 1, 64), key="spans_max_new",
                        help=f"T5 and BART generate up to this many; the decoder tries answers of 1 to "
                             f"{infill.CAUSAL_SPAN_TOKENS} tokens (each length is a beam step over the text).")
    st.query_params["max_new"] = str(max_new)
    columns: list[Backend] = [*(backend.model(resolve(m, directory, random_weights=random_weights), **where)
                                for m in picked + ([extra] if extra else [])), *map(backend.served, served)]
    if not columns:
        st.info("Pick at least one model.", icon=":material/info:")
    for col, column in zip(st.columns(max(1, len(columns))), columns, strict=False):
        with col:
            view.infill_column(column, prompt, max_new)
    several = len(SPAN_MARKER.findall(prompt)) > 1  # Why explains one blank at a time: the first, said so
    ui.page_link("why.py", "Explain this prediction" + (" (its first blank)" if several else ""),
                 text=first_blank_only(prompt), target="", models=",".join(picked))

with t_qa:
    st.caption("A decoder writes its answer after the context and the question, then the answer is looked up "
               "in the context (generative); a SQuAD reader points at the span of the context it believes "
               "answers (extractive).")
    offered = [*cache.qa_models(), OTHER]
    ui.seed_from_url("qa_model", "qa", offered)
    choice = st.selectbox("Model", offered, key="qa_model", format_func=lambda m: m if m == OTHER else qa.describe(m))
    st.query_params["qa"] = choice
    model = choice if choice != OTHER else st.text_input(
        "Hub id or directory of a question-answering checkpoint", key="qa_path").strip()
    question = st.text_input("Question", value=QUESTION, key="qa_question")
    context = st.text_area("Context", value=CONTEXT, key="qa_context", height=140)
    ref = qa.model_ref(model, directory, random_weights) if model else None  # resolved once, passed down
    max_len = 30 if ref and qa.is_generative(ref) else st.slider("Longest answer (tokens)", 1, 64, 30,
                                                                 key="qa_max_len")
    if ref is None:
        view.not_ready(ref)
    readers: list[Backend] = [*([backend.model(ref, **where)] if ref else []), *map(backend.served, served)]
    for i, reader in enumerate(readers):  # the picked model's answer, then each served one below it
        view.answer_box(reader, question, context, max_len, first=i == 0 and ref is not None)
