"""Drawing the Published results page's views (Streamlit only; the numbers come from explorer.papers.results,
explorer.papers.crosspaper, explorer.architecture.budgets and explorer.papers.scaling)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import ui
from app.caches import results as cache
from explorer.papers import claims, crosspaper, results
from explorer.plots import results as plots
from explorer.plots import scaling as scaling_plots

VIEWS = {"glue": "Across papers: GLUE", "paper": "One paper's table", "budgets": "Budgets and scaling laws"}


def pick_view() -> str:
    """The view radio, seeded from ``?view=`` (a shared link with only ``?benchmark=`` opens that table)."""
    if "res_view" not in st.session_state and "view" not in st.query_params and "benchmark" in st.query_params:
        st.session_state["res_view"] = "paper"
    ui.seed_from_url("res_view", "view", list(VIEWS))
    view = st.radio("View", list(VIEWS), key="res_view", horizontal=True, format_func=VIEWS.get,
                    label_visibility="collapsed")
    st.query_params["view"] = view
    return view


def glue_section() -> None:
    """Every paper's GLUE rows under the same task columns, with what is not comparable."""
    st.subheader("GLUE across papers")
    left, right = st.columns([1, 2])
    split = left.radio("Split", ["test", "dev", "both"], key="res_split", horizontal=True)
    records = cache.glue_view(None if split == "both" else split)
    table = pd.DataFrame(records)
    st.dataframe(table, hide_index=True, key="res_glue", placeholder="—")  # a task the paper did not report
    ui.csv_download(table, f"glue-{split}", key="res_glue_csv")
    task = right.selectbox("Task on the chart", list(crosspaper.TASKS), index=list(crosspaper.TASKS).index("MNLI-m"),
                           key="res_task")
    ui.figure(plots.glue_figure(records, task), f"glue-{split}-{task}", key="res_glue_fig")
    with st.container(border=True):
        st.markdown("**What is not comparable**\n\n" + "\n".join(f"- {note}" for note in crosspaper.NOTES))


def paper_section() -> None:
    """One benchmark's published table, and the score-against-cost frontier."""
    names = results.benchmarks()
    ui.seed_from_url("res_benchmark", "benchmark", names)
    benchmark = st.selectbox("Benchmark", names, key="res_benchmark")
    st.query_params["benchmark"] = benchmark
    rows = cache.rows(benchmark)
    st.subheader(f"{benchmark}: the published table")
    table = pd.DataFrame(results.table(rows)).astype(str)  # "not reported" beside numbers: one text column
    st.dataframe(table, hide_index=True, key="res_table")
    ui.csv_download(table, f"results-{benchmark}", key="res_csv")
    st.caption("Sources: " + "; ".join(dict.fromkeys(r.source for r in rows)))
    if results.numberless(rows):  # a claim the source makes only in words: nothing to place on a chart
        st.caption("This table holds no number: its source states the result in words (the text column), and "
                   "no readable copy of the tables behind it was found. The words are shown as the source has them, "
                   "never turned into a number.")
        return
    frontier_section(benchmark, rows)


def _metric_and_axis(benchmark: str) -> tuple[str, str]:
    metric_names = results.metrics(benchmark)
    ui.seed_from_url("res_metric", "metric", metric_names)
    if st.session_state.get("res_metric") not in metric_names:
        st.session_state["res_metric"] = metric_names[0]
    left, right = st.columns([2, 1])
    metric = left.selectbox("Metric", metric_names, key="res_metric")
    ui.seed_from_url("res_x", "x", list(plots.AXES))
    x = right.radio("Cost on x", list(plots.AXES), key="res_x", horizontal=True, format_func=lambda a: plots.AXES[a][2])
    st.query_params.update({"metric": metric, "x": x})
    return metric, x


def frontier_section(benchmark: str, rows: list[results.Row]) -> None:
    """Score against our cost (parameters, FLOPs per token) or the pretraining compute."""
    st.subheader("Score against cost: the efficiency frontier")
    metric, x = _metric_and_axis(benchmark)
    chosen = [r for r in rows if r.metric == metric]
    higher = results.higher_is_better(metric)
    variants = results.scored_variants(chosen)
    pts = results.points(chosen, cache.costs(variants))
    if x == "train_flops":
        pts = results.with_compute(pts, cache.train_flops(variants))
    # CTRL's prompts: rows of one model, no cost to trade against
    if len(pts) > 1 and len({p.variant for p in pts}) == 1:
        st.info(f"Every row of this metric is one catalog variant ({pts[0].variant}): there is no cost to compare "
                "along, so no frontier is drawn; the table above holds the values."
                + ("" if higher else " Lower is better for this metric."), icon=":material/info:")
    elif pts:
        best = results.frontier(pts, plots.AXES[x][0], higher_is_better=higher)
        ui.figure(plots.efficiency_figure(pts, best, metric, x), f"efficiency-{benchmark}-{metric}", key="res_fig")
        st.caption("Red points are on the frontier: no cheaper variant scores better. Parameters and FLOPs per token "
                   "are the catalog architecture's (bare network, no task head), not the paper's own count; "
                   "pretraining compute is the paper's, else 6 x parameters x tokens (see Budgets)."
                   + ("" if higher else " Lower is better for this metric."))
    else:
        st.info("No row of this metric maps to a catalog variant with a reported value"
                + (" and a recorded pretraining budget." if x == "train_flops" else "."), icon=":material/info:")
    for why, models in results.unplaced(chosen).items():
        if models:
            st.caption(f"Not on the chart ({why}): {', '.join(ui.markdown_safe(m) for m in models)}")


def budgets_section() -> None:
    """The recorded pretraining budgets, then Kaplan's and Chinchilla's laws with the catalog placed on them."""
    st.subheader("What each variant cost to pretrain")
    table = pd.DataFrame(cache.budget_table())
    st.dataframe(table, hide_index=True, key="res_budgets")
    ui.csv_download(table, "budgets", key="res_budgets_csv")
    st.caption("Blank = the source does not say. tokens_source 'steps x batch x seq_len' is computed from the paper's "
               "figures; train_flops_source 'estimated' is 6 x published parameters x tokens (Kaplan et al. 2020).")
    st.subheader("Scaling laws, with the catalog on them")
    places = cache.placements()
    ui.figure(scaling_plots.kaplan_figure(places), "kaplan-scaling", key="res_kaplan")
    ui.figure(scaling_plots.chinchilla_figure(places), "chinchilla-plane", key="res_chinchilla")
    st.caption("Kaplan et al. 2020 (Eq. 1.1, 1.2) fit decoder-only language models on WebText2, with N counting "
               "non-embedding parameters: for encoders (BERT, RoBERTa) the predicted loss only shows where they sit "
               "on the curve. Chinchilla (Hoffmann et al. 2022): compute-optimal N and D both grow as about C^0.5, "
               "about 20 tokens per parameter; its fitted law L(N, D) is drawn with the rounded constants the paper "
               "prints (Approach 3), which Besiroglu et al. 2024 found bias its predictions: read it as a shape. Only "
               "variants whose budget gives a token count are placed.")
    for key, why in cache.scaling_unplaced().items():
        st.caption(f"Not placed: {ui.markdown_safe(key)} ({why}).")


LAB_COLUMNS = {"claim": "claim", "paper": "the paper", "source": "source", "measured": "measured here",
               "verdict": "verdict", "why": "why"}


def lab_claims_section() -> None:
    """The pretraining lab's measurements beside the papers' claims, with what a tiny model cannot show."""
    st.subheader("Reproduced here (pretraining lab)")
    rep = cache.pretraining_claims(claims.stamp())
    m = rep.measurement
    st.markdown(
        f"Measured on **{m.date}** by `benchmarks/pretrain_claims.py`: each objective trained **{m.budget_steps} steps "
        f"x {m.batch_tokens:,} tokens** ({m.size} size, seed {m.seed}, {m.device}; ELECTRA on BERT MLM's training "
        f"FLOPs), then fine-tuned on the same probe (was a pair of adjacent words swapped?) for "
        f"{m.probe_spec.get('steps')} steps x {m.probe_spec.get('batch')} examples and scored on "
        f"{m.probe_spec.get('test_examples')} held-out windows (majority baseline 0.5). These are models a "
        "million times smaller than the papers', trained for minutes: the verdicts are qualitative.")
    table = pd.DataFrame([{LAB_COLUMNS[k]: v for k, v in r.to_dict().items() if k in LAB_COLUMNS} for r in rep.rows])
    st.dataframe(table, hide_index=True, key="res_lab_claims")
    ui.csv_download(table, "pretraining-claims", key="res_lab_csv")
    short = [r for r in rep.rows if r.verdict != "reproduced"]
    if short:
        st.markdown("**What a tiny model does not reproduce here, and why**\n\n" + "\n".join(
            f"- {ui.markdown_safe(r.claim)}: *{r.verdict}*. {ui.markdown_safe(r.why)}" for r in short))
    st.caption(f"Machine: {ui.markdown_safe(m.machine)}. Took {m.seconds:.0f} s. Rerun the script to measure again "
               "(other objectives appear as their training families are added).")
