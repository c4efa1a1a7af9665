"""The Evaluate page's three parts: a task's accuracy, a text's perplexity, the embedding projector.

Each part reads its widgets (their values in the URL, so a view is shared as a link), asks the cached wrappers of
:mod:`app.caches.evaluation` (one request per model, with a progress bar) and draws the results with
:mod:`explorer.plots.evaluation`. A model that fails says why in its own box and the others go on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import pandas as pd
import streamlit as st

from app import ui
from app.caches import evaluation as cache
from app.views import device_picker, served_picker
from explorer.core.limits import EVALUATION_QUERY_CHARS, EVALUATION_TEXT_CHARS
from explorer.core.userfiles import MAX_UPLOAD_MB
from explorer.evaluation import bundled, report, slices
from explorer.evaluation.perplexity import Perplexity
from explorer.evaluation.projection import METHODS
from explorer.evaluation.projector import Projection
from explorer.evaluation.result import ModelRun
from explorer.evaluation.task import KINDS, Task
from explorer.plots import evaluation as plots
from explorer.runtime.placement import Placement
from explorer.runtime.resolve import ModelRef, resolve
from explorer.serving import backend
from explorer.serving.backend import Backend
from explorer.serving.endpoints import Endpoint
from explorer.tasks.similarity import BI_ENCODER

R = TypeVar("R")
Progress = Callable[[float, str], None]
UPLOAD = "upload"
DEFAULT = "gemma3-270m"
SOURCES = {"multiple_choice": "Bundled: " + bundled.TASKS["multiple_choice"][1],
           "cloze": "Bundled: " + bundled.TASKS["cloze"][1], UPLOAD: "Upload a JSONL file"}
SHAPES = ('One JSON object a line: {"context", "choices", "answer"} (multiple choice: each choice is scored after '
          'the context and a space, lm-eval\'s target_delimiter) or {"context", "continuation"} (cloze: the '
          'continuation verbatim). Other fields are kept: slice and colour by them.')
PLL = ("Masked LMs are scored by pseudo-log-likelihood (Salazar et al. 2020): each continuation token masked in turn "
       "with the whole text visible. It compares the choices of one model; it is not a probability of the text.")


def _models(param: str, key: str, directory: str | None, limit: int | None = None) -> list[ModelRef]:
    """The local models to run (URL-bound), plus a typed directory, each resolved once."""
    offered = cache.offered(directory)
    picked = st.multiselect("Local models", list(offered), default=ui.query_list(param, [DEFAULT], list(offered)),
                            key=key, format_func=lambda k: offered.get(k, k), max_selections=limit,
                            help="A decoder scores by log-likelihood, a masked LM by pseudo-log-likelihood, T5 and "
                                 "BART by the continuation as their output. Others: download on the Models page.")
    ui.set_query_list(param, picked)
    typed = st.text_input("Or a directory saved with save_pretrained", key=f"{key}_dir").strip()
    return [resolve(m, directory) for m in picked + ([typed] if typed else [])]


def _task(where: Placement) -> tuple[str, bytes | None, Task] | None:
    """The task: bundled (by name) or uploaded, checked line by line (a bad line: one red box naming it)."""
    ui.seed_from_url("eval_task", "task", list(SOURCES))
    source = st.radio("Task", list(SOURCES), format_func=SOURCES.__getitem__, key="eval_task", horizontal=True)
    st.query_params["task"] = source
    name, data = source, None
    if source == UPLOAD:
        st.caption(SHAPES)
        upload = st.file_uploader(f"Task file (JSONL, at most {MAX_UPLOAD_MB} MB)", type=["jsonl", "json", "txt"],
                                  key="eval_upload", max_upload_size=MAX_UPLOAD_MB)
        if upload is None:
            return None
        name, data = upload.name, upload.getvalue()
    with ui.guard():
        return name, data, cache.task(name, data)
    return None


def _backends(refs: Sequence[ModelRef], served: Sequence[Endpoint], where: Placement) -> list[Backend]:
    """The models asked, here (on the sidebar's device) then served: each asked the same way from here on."""
    return [*(backend.model(r, **where.kwargs()) for r in refs), *map(backend.served, served)]


def _runs(models: Sequence[Backend], run: Callable[[Backend, Progress], R], what: str) -> list[R]:
    """Each model's result, one request each under a progress bar (a failure: a box, the others go on)."""
    out: list[R] = []
    bar = st.progress(0.0, text=f"{what}…")
    for model in models:
        with ui.guard():
            out.append(run(model, ui.progress_to(bar)))
    bar.empty()
    return out


def task_part(where: Placement, directory: str | None) -> None:
    """Accuracy of several models on one task: summary, intervals, examples (disagreements first), slices."""
    picked = _task(where)
    models = _models("models", "eval_models", directory)
    served = served_picker.pick("evaluate", "prompt_logprobs", "task scoring (each choice's log-likelihood)")
    if picked is None:
        return
    name, data, task = picked
    st.caption(f"{ui.markdown_safe(task.source)} · {KINDS[task.kind]} · {len(task.examples):,} examples · fields: "
               f"{', '.join(task.fields) or 'none'}")
    ui.notices(task.notices)
    runs = _runs(_backends(models, served, where), lambda m, p: cache.task_run(m, name, data, p),
                 "Scoring the examples")
    if served:
        st.caption("A served model answers one request per choice (a CPU engine takes about half a second a "
                   "token): on this page it scores what fits in one request's time; the command line scores all.")
    if not runs:
        return
    rep = report.build(task, runs)
    _report(rep, task)


def _report(rep: report.Report, task: Task) -> None:
    ui.notices(rep.notices[len(task.notices):])
    if any(r.family == "masked" for r in rep.runs):
        st.caption(PLL)
    if any(r.untrained for r in rep.runs):
        ui.notice(ui.UNTRAINED)
    ui.figure(plots.accuracy_bars(rep), "evaluate_accuracy", key="eval_acc_fig")
    summary = pd.DataFrame(plots.summary_rows(rep))
    st.dataframe(summary, hide_index=True, width="stretch")
    ui.csv_download(summary, "evaluate_summary", key="eval_summary_csv")
    for d in rep.differences:
        st.caption(f"{ui.markdown_safe(d.first)} minus {ui.markdown_safe(d.other)}: {d.value:+.1%} on {d.examples} "
                   f"examples both scored (paired bootstrap 95% interval {d.low:+.1%} to {d.high:+.1%}).")
    st.subheader("Example by example (disagreements first)")
    rows = pd.DataFrame(plots.example_rows(rep))
    st.dataframe(rows, hide_index=True, width="stretch", height=320)
    ui.csv_download(rows, "evaluate_examples", key="eval_rows_csv")
    _slices(rep, task)


def _slices(rep: report.Report, task: Task) -> None:
    st.subheader("Slices")
    options = [*task.fields, slices.LENGTH]
    ui.seed_from_url("eval_slice", "slice", options)
    by = st.selectbox("Slice by", options, key="eval_slice")
    st.query_params["slice"] = by
    with ui.guard():
        found = slices.slices(rep, task, by)
        ui.figure(plots.slice_bars(found), "evaluate_slices", key="eval_slice_fig")
        table = pd.DataFrame(plots.slice_rows(found))
        st.dataframe(table, hide_index=True, width="stretch")
        ui.csv_download(table, "evaluate_slices", key="eval_slice_csv")


def perplexity_part(where: Placement, directory: str | None) -> None:
    """Perplexity of one text under several models."""
    text = st.text_area("Text (the bundled one is three paragraphs written for this project)",
                        value=bundled.text(), height=180, key="eval_text", max_chars=EVALUATION_TEXT_CHARS)
    models = _models("ppl_models", "eval_ppl_models", directory)
    served = served_picker.pick("evaluate_ppl", "prompt_logprobs", "perplexity (the text's own log-probabilities)",
                                param="ppl_served")
    results: list[Perplexity] = _runs(_backends(models, served, where), lambda m, p: _perplexity(m, text, p),
                                      "Scoring the text")
    if not results:
        return
    for r in results:
        ui.notices(r.notices)
    ui.figure(plots.perplexity_bars(results), "evaluate_perplexity", key="eval_ppl_fig")
    table = pd.DataFrame([{"model": r.model, "perplexity": round(r.perplexity, 3), "tokens": r.tokens,
                           "windows": f"{r.windows} of {r.total_windows}", "word perplexity": r.word_perplexity,
                           "bits per byte": r.bits_per_byte, "seconds": round(r.seconds, 2), "scored by": r.method,
                           "ran on": device_picker.ran_caption(r)} for r in results])
    st.dataframe(table, hide_index=True, width="stretch")
    ui.csv_download(table, "evaluate_perplexity", key="eval_ppl_csv")


def _perplexity(model: Backend, text: str, progress: Progress) -> Perplexity:
    """One model's perplexity of the text, its cost said first (what does not fit the page's time is said too)."""
    ui.notice(cache.perplexity_said(cache.perplexity_cost(model, text)))
    return cache.text_perplexity(model, text, progress)


def _texts(where: Placement, directory: str | None) -> tuple[tuple[str, ...], Task | None] | None:
    """The projector's texts: a task's contexts (colour by its fields, by right/wrong) or typed lines."""
    kinds = {"multiple_choice": "The multiple-choice task's questions", "lines": "Sentences, one a line"}
    ui.seed_from_url("eval_proj_texts", "texts", list(kinds))
    which = st.radio("Points", list(kinds), format_func=kinds.__getitem__, key="eval_proj_texts", horizontal=True)
    st.query_params["texts"] = which
    if which == "lines":
        typed = st.text_area("Sentences", value="\n".join(bundled.lines()), height=150,
                             key="eval_proj_lines", max_chars=EVALUATION_TEXT_CHARS)
        with ui.guard():  # too many or too long lines: one box, and nothing is embedded
            return cache.lines(typed), None
        return None
    task = cache.task("multiple_choice")
    return tuple(ex.context for ex in task.examples), task


def _layout_choices() -> tuple[str, int, int, int | None, bool]:
    """Method, dimensions, seed, layer (None: the final states) and token points, each bound to the URL."""
    c1, c2, c3, c4 = st.columns(4)
    ui.seed_from_url("eval_method", "method", list(METHODS))
    method = c1.radio("Projection", list(METHODS), format_func=METHODS.__getitem__, key="eval_method", horizontal=True)
    st.query_params["method"] = method
    ui.seed_from_url("eval_dims", "dims", ["2", "3"])
    dims = int(c2.radio("Dimensions", ["2", "3"], key="eval_dims", horizontal=True))
    st.query_params["dims"] = str(dims)
    seed = int(c3.number_input("Seed", 0, 10_000, ui.query_int("seed", 0, 0, 10_000), key="eval_seed",
                               help="t-SNE's and UMAP's random start: one seed, one picture"))
    st.query_params["seed"] = str(seed)
    layer = int(c4.number_input("Layer (-1: final states)", -1, 64, ui.query_int("layer", -1, -1, 64),
                                key="eval_layer", help="0 is the embeddings; each block's output after it"))
    st.query_params["layer"] = str(layer)
    tokens = st.toggle("A point per token (that layer's states) instead of per sentence", key="eval_tokens",
                       value=st.query_params.get("tokens") == "1")
    st.query_params["tokens"] = "1" if tokens else "0"
    return method, dims, seed, (None if layer < 0 else layer), tokens


def _colours(projection: Projection, task: Task | None, colour_by: str, runs: Sequence[ModelRun]) -> list[str] | None:
    """One colour label per point: a field's value, right or wrong, or nothing."""
    if task is None or colour_by == "none":
        return None
    if colour_by == "right or wrong" and runs:
        first = runs[0]
        hits = [None if first.scored(i) is None else first.correct(i, ex.answer) for i, ex in enumerate(task.examples)]
        marks = [plots.NOT_SCORED if h is None else plots.RIGHT if h else plots.WRONG for h in hits]
        return [marks[o] for o in projection.owners]
    return [str(task.examples[o].field(colour_by)) for o in projection.owners]


def projector_part(where: Placement, directory: str | None) -> None:
    """Sentence embeddings or token states of one or two models, projected and compared."""
    chosen = _texts(where, directory)
    if chosen is None:
        return
    texts, task = chosen
    offered = list(dict.fromkeys([BI_ENCODER, DEFAULT, *cache.offered(directory)]))
    picked = st.multiselect("Models (two: side by side, aligned)", offered,
                            default=ui.query_list("proj_models", [BI_ENCODER], offered, limit=2),
                            key="eval_proj_models", max_selections=2)
    ui.set_query_list("proj_models", picked)
    served = served_picker.pick("evaluate_proj", "embeddings", "sentence embeddings", param="proj_served")
    method, dims, seed, layer, tokens = _layout_choices()
    sources = _backends([resolve(m, directory) for m in picked], served, where)[:2]  # each resolved once
    fields = [*(task.fields if task else ()), *(["right or wrong"] if task else []), "none"]
    colour_by = st.selectbox("Colour by", fields + (["model"] if len(sources) == 2 else []), key="eval_colour")
    query = st.text_input("Nearest neighbours of", key="eval_query", max_chars=EVALUATION_QUERY_CHARS,
                          value="Which animal has eight legs?")
    projections: list[Projection] = _runs(sources, lambda m, p: cache.layout(
        cache.text_vectors(m, texts, layer, tokens, p), method, dims, seed),
        f"Embedding {len(texts):,} texts")
    if not projections:
        return
    runs = _runs(_backends([resolve(DEFAULT, directory)], [], where), lambda m, p: cache.task_run(
        m, "multiple_choice", None, p), "Scoring") if colour_by == "right or wrong" else []
    _draw(projections, sources[0], texts, task, colour_by, runs, query, layer, tokens)


def _draw(projections: list[Projection], src: Backend, texts: tuple[str, ...], task: Task | None, colour_by: str,
          runs: list[ModelRun], query: str, layer: int | None, tokens: bool) -> None:
    for p in projections:
        ui.notices(p.notices)
        st.caption(f"{ui.markdown_safe(p.model)}: {ui.markdown_safe(p.how)} · {device_picker.ran_caption(p)} · "
                   f"{p.seconds:.1f} s")
    near: tuple = ()
    with ui.guard():
        if query.strip():
            near = cache.neighbours(src, texts, query, layer, tokens)
    colours = _colours(projections[0], task, colour_by, runs)
    if len(projections) == 2:
        first, second = projections
        with ui.guard():
            first, second = cache.aligned(first, second)
            fig = (plots.overlay_figure(first, second) if colour_by == "model" else
                   plots.side_by_side_figure(first, second, colours, colour_by))
            ui.notices(second.notices[-1:])
            ui.figure(fig, "evaluate_projector_pair", key="eval_proj_pair")
    else:
        ui.figure(plots.projection_figure(projections[0], colours, colour_by, [n.index for n in near]),
                  "evaluate_projector", key="eval_proj_fig")
    if near:
        table = pd.DataFrame([n.__dict__ for n in near])
        st.dataframe(table, hide_index=True, width="stretch")
        ui.csv_download(table, "evaluate_neighbours", key="eval_near_csv")
