"""Drawing for the Interventions page: URL-bound inputs, and each result into figures, tables and downloads
(Streamlit only; every number comes from explorer.interventions).

Every typed value of the page lives in the URL (``?clean=...&corrupt=...&site=heads``): :func:`url_text` and
:func:`url_choice` seed a widget from the URL on a session's first run and write it back on every run, so a view can
be shared as a link.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app import ui
from explorer.core.labels import escape_markdown
from explorer.core.limits import INTERVENTION_PROMPT_CHARS
from explorer.interventions import metrics
from explorer.interventions.ablation import Ablation
from explorer.interventions.across import Across
from explorer.interventions.grid import PatchGrid
from explorer.interventions.pair import HOW_TO_CORRUPT
from explorer.interventions.ranking import HeadRanking
from explorer.interventions.remote import NOT_VERIFIED
from explorer.interventions.steering import Steering
from explorer.plots import interventions as plots

N = TypeVar("N", int, float)


def url_text(label: str, key: str, param: str, default: str, *, max_chars: int, area: bool = False,
             help: str | None = None, height: int | None = None) -> str:
    """A text box (an area with ``area``) seeded from ``?param=`` (else ``default``) and written back to the URL."""
    if key not in st.session_state:
        st.session_state[key] = str(st.query_params.get(param, default))[:INTERVENTION_PROMPT_CHARS]
    if area:
        value = st.text_area(label, key=key, max_chars=max_chars, help=help, height=height)
    else:
        value = st.text_input(label, key=key, max_chars=max_chars, help=help)
    st.query_params[param] = value
    return value


def url_choice(label: str, options: Sequence[str], key: str, param: str, *, radio: bool = True,
               format_func: Callable[[str], str] = str) -> str:
    """A radio (or select box) over ``options`` seeded from ``?param=`` and written back to the URL."""
    ui.seed_from_url(key, param, list(options))
    if radio:
        value = st.radio(label, list(options), key=key, horizontal=True, format_func=format_func)
    else:
        value = st.selectbox(label, list(options), key=key, format_func=format_func)
    st.query_params[param] = str(value)
    return str(value)


def url_number(col: DeltaGenerator, label: str, key: str, param: str, default: N, lo: N, hi: N,
               step: N | None = None) -> N:
    """A number box (whole numbers when ``default`` is an int) seeded from ``?param=`` within [lo, hi], written back
    to the URL; a value in a link that is not a finite number gives ``default``."""
    kind = type(default)
    if key not in st.session_state:
        try:
            value = float(str(st.query_params.get(param, default))[:32])
        except ValueError:
            value = float(default)
        st.session_state[key] = kind(min(max(value, lo), hi)) if math.isfinite(value) else default
    value = kind(col.number_input(label, lo, hi, key=key, step=step))
    st.query_params[param] = str(value)
    return value


def how_to_corrupt() -> None:
    st.caption(f"Both prompts must have the same number of tokens for the model's tokenizer. {HOW_TO_CORRUPT}")


def grid(result: PatchGrid, key: str) -> None:
    """A patching grid: notices, the heatmap, what it cost, and its cells as CSV."""
    ui.notices(result.notices)
    name = f"patching-{result.site}-{result.metric}"
    ui.figure(plots.patch_heatmap(result), name, key=f"{key}_fig")
    work = result.plan
    cost = (f"{work.cells:,} patched copies of the corrupted run in {work.forwards} forwards (up to "
            f"{work.rows_per_forward:,} copies each, {work.bytes_per_forward / 2**20:,.0f} MB of activations), "
            if work else "")
    st.caption(f"{cost}{result.seconds:.1f} s on {result.device_name} ({result.dtype}). 0 = the corrupted run's "
               f"{metrics.LABELS[result.metric]}, 1 = the clean run's; a cell is one activation of the clean run "
               "put into the corrupted run.")
    ui.csv_download(pd.DataFrame(result.rows()), name, "Download the grid (CSV)", key=f"{key}_csv")


def ablation(result: Ablation) -> None:
    """Before and after one ablation: the target's probability, the KL, the distribution and its table."""
    ui.notices(result.notices)
    c1, c2, c3 = st.columns(3)
    c1.metric(f"P({result.target}) before", f"{result.target_before:.4f}")
    c2.metric("after", f"{result.target_after:.4f}", f"{result.change:+.4f}")
    c3.metric("KL(before ‖ after)", f"{result.kl:.4f} nats")
    ui.figure(plots.distribution_figure(result), f"ablation-{result.component}", key="iv_ablation_fig")
    table = pd.DataFrame(result.rows())
    st.dataframe(table, hide_index=True, width="stretch")
    ui.csv_download(table, f"ablation-{result.component}", "Download the table (CSV)", key="iv_ablation_csv")


def ranking(result: HeadRanking) -> None:
    """Every head by ablation effect, beside its gradient importance."""
    ui.notices(result.notices)
    ui.figure(plots.ranking_figure(result), "heads-effect-vs-importance", key="iv_rank_fig")
    st.caption(escape_markdown(result.importance_note))
    table = pd.DataFrame(result.rows())
    st.dataframe(table, hide_index=True, width="stretch", height=300)
    ui.csv_download(table, "heads-ranking", "Download the ranking (CSV)", key="iv_rank_csv")


def steering(result: Steering) -> None:
    """The two generations side by side."""
    ui.notices(result.notices)
    c1, c2 = st.columns(2)
    c1.markdown("**Without steering**")
    c1.text(result.prompt + result.unsteered)
    c2.markdown(f"**With {result.coefficient:+g} × direction at layer {result.layer}**")
    c2.text(result.prompt + result.text)
    st.caption(f"Direction: mean activation of {len(result.positive)} positive minus {len(result.negative)} negative "
               f"prompt(s) after block {result.layer} (norm {result.direction_norm:,.1f}); {result.strategy}, seed "
               f"{result.seed}, {result.max_new_tokens} new tokens at most; {result.seconds:.1f} s.")


def across(result: Across) -> None:
    """Families side by side on one relative-depth axis, and the models that could not take part."""
    for model, reason in result.refused:
        st.warning(f"{escape_markdown(model)}: {escape_markdown(reason)}", icon=":material/block:")
    if result.grids:
        ui.figure(plots.across_figure(result.grids), "patching-across-families", key="iv_across_fig")
        rows = [dict(row, model=g.model) for g in result.grids for row in g.rows()]
        ui.csv_download(pd.DataFrame(rows), "patching-across-families", "Download all grids (CSV)",
                        key="iv_across_csv")


def remote_note() -> None:
    st.info(escape_markdown(NOT_VERIFIED), icon=":material/cloud_off:")
