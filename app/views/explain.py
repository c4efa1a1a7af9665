"""Drawing "Why this prediction": a model's cell in each row (lens, tuned lens, one row per method) and the depth
figure across models, for any :class:`~explorer.serving.backend.Backend`, here or served (Streamlit only; every
number comes from explorer.explain)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from app import ui
from app.caches import explain as cache
from app.views.device_picker import ran_caption
from explorer.core.labels import escape_markdown
from explorer.core.notices import Notice
from explorer.explain import background
from explorer.explain import task as tasks
from explorer.explain.attribution import METHOD_NAMES, Attribution, Steps
from explorer.explain.lens import Lens
from explorer.explain.methods import METHODS
from explorer.explain.tuning import TuneReport
from explorer.plots import explain as plots
from explorer.runtime.resolve import ModelRef
from explorer.serving.backend import Backend

NO_HEAD = Notice("info", "No lens: this model has no language-model head (it was saved without one, like the "
                         "bundled all-MiniLM-L6-v2), so its layers cannot be read as predictions. Its attributions "
                         "of sentence similarity are below.")


def header(model: Backend) -> None:
    st.markdown(f"**{escape_markdown(model.shown)}**")


def _reads_tokens(model: Backend) -> bool:
    """Whether the lens can read this model: its insides are here, and it has a language-model head."""
    why = model.why_not("insides")
    if why is not None:
        ui.notice(Notice("info", f"Not available: {why}."))
        return False
    if model.ref is None or not tasks.has_head(model.ref):
        ui.notice(NO_HEAD)
        return False
    return True


def _layers_table(result: Lens) -> pd.DataFrame:
    return pd.DataFrame([{"layer": x.layer, "depth": x.depth, "top-1": x.top[0][0], "p(top-1)": x.top[0][1],
                          "target rank": x.target_rank, "p(target)": x.target_probability, "entropy": x.entropy,
                          "KL to final": x.kl_to_final} for x in result.layers])


def lens_cell(model: Backend, text: str, target: str, position: int | None, tuned: bool, key: str) -> Lens | None:
    """One model's lens: the grid, and every layer's reading at the target's position as a table."""
    if not _reads_tokens(model):
        return None
    with ui.guard():
        result = cache.logit_lens(model, text, target or None, position, tuned)
        if result.untrained:
            ui.notice(ui.UNTRAINED)
        ui.notices(result.notices)
        st.caption(f"Read after {result.position_token!r} (position {result.position}) · {ran_caption(result)} · "
                   f"{result.seconds * 1000:.0f} ms")
        ui.figure(plots.lens_grid(result), f"lens-{key}", key=f"why_grid_{key}")
        table = _layers_table(result)
        with st.expander("Every layer at this position"):
            st.dataframe(table, hide_index=True, width="stretch")
        ui.csv_download(table, f"lens-{key}", key=f"why_lens_csv_{key}")
        return result
    return None


def depth(results: Sequence[Lens]) -> None:
    """The target's rank and the KL by relative depth, every model on one axis."""
    if not results:
        return
    ui.figure(plots.depth_figure(results), "lens-by-depth", key="why_depth")
    rows = [{"model": r.model, "lens": r.kind, **_layers_table(r).iloc[i].to_dict()} for r in results
            for i in range(len(r.layers))]
    ui.csv_download(pd.DataFrame(rows), "lens-by-depth", key="why_depth_csv")


def _job_status(job: background.TuningJob, key: str) -> None:
    st.progress(min(max(job.fraction, 0.0), 1.0), text=job.note or job.state)
    if job.active and st.button("Stop the training", key=f"why_stop_{key}"):
        background.stop(job)


def tuned_cell(model: Backend, text: str, target: str, position: int | None, key: str) -> Lens | None:
    """The tuned lens beside the logit lens when one is trained; else a button that trains one in the background
    (progress redrawn every two seconds by a fragment while it runs)."""
    if not _reads_tokens(model) or model.ref is None:
        return None
    ref, (device, dtype) = model.ref, model.placement
    card = cache.tuned_card(ref)
    if card is None:
        job = background.job_for(ref, device=device, dtype=dtype)
        if job is not None and job.active:
            st.fragment(lambda: _poll(ref, job, key), run_every=2.0)()
            return None
        if job is not None and job.note:
            st.caption(escape_markdown(job.note))
        spec = background.spec()
        st.caption(f"No tuned lens is trained for this model yet ({spec.steps} steps of {spec.windows} x "
                   f"{spec.seq_len} tokens of the bundled corpus, in the background).")
        with ui.guard():
            if st.button("Train a tuned lens", key=f"why_train_{key}"):
                background.launch(ref, device=device, dtype=dtype)
                st.rerun()
        return None
    report = TuneReport(**{k: card[k] for k in TuneReport.__dataclass_fields__ if k in card})  # type: ignore[arg-type]
    ui.figure(plots.tuned_figure(report), f"tuned-kl-{key}", key=f"why_tuned_kl_{key}")
    return lens_cell(model, text, target, position, True, f"{key}-tuned")


def _poll(ref: ModelRef, job: background.TuningJob, key: str) -> None:
    _job_status(job, key)
    if not job.active:
        cache.tuned_card.clear()
        st.rerun()


def attribution_cell(model: Backend, method: str, text: str, target: str, foil: str, pair: str, steps: Steps,
                     key: str) -> None:
    """One model's token strip for one method, with the explained number, completeness and cost (a served model:
    occlusion through its scoring; the gradient methods say why they cannot run)."""
    why = None if METHODS[method].served else model.why_not("insides")
    if why is not None:
        ui.notice(Notice("info", f"Not available: {why}, so only occlusion runs on it."))
        return
    with ui.guard():
        _strip(cache.attribute(model, text, target or None, foil or None, pair or None, method, steps), key)


def _strip(result: Attribution, key: str) -> None:
    if result.untrained:
        ui.notice(ui.UNTRAINED)
    ui.notices(result.notices)
    ui.figure(plots.token_strip(result), f"{result.method}-{key}", key=f"why_strip_{result.method}_{key}")
    said = f"{escape_markdown(result.objective)} = {result.output:.4f}"
    if result.baseline_output is not None and result.completeness is not None:
        said += (f" · at the baseline {result.baseline_output:.4f} · the scores sum to the difference within "
                 f"{result.completeness:.2%} (completeness, {result.steps} steps)")
    st.caption(f"{said} · {ran_caption(result)} · {result.seconds * 1000:.0f} ms")
    if result.cost is not None:
        st.caption(escape_markdown(f"Cost: {result.cost.said}; took {result.seconds:.1f} s"))
    table = pd.DataFrame([{"token": t.token, "sentence": "AB"[t.part], "score": t.score} for t in result.tokens])
    ui.csv_download(table, f"{result.method}-{key}", key=f"why_csv_{result.method}_{key}")


def method_title(method: str) -> None:
    st.subheader(METHOD_NAMES[method].capitalize())
