"""The Pretraining lab's live part: a row per run (progress, Stop / Resume / Save) and the curves and table,
redrawn every second by the page's fragment while a run trains."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import ui
from app.state import lab
from explorer.plots import training as plots
from explorer.training import downstream

PROBE_NOTE = ("Probe: after training, a copy of each model is fine-tuned with the same small budget on "
              f"\"{downstream.TASK}\" (made from the corpus); 50% is chance, and a randomly initialised model scores "
              "about that too.")
STATUS = {"waiting": "waiting for a training slot", "building": "building the model…", "done": "done",
          "probing": "trained; fine-tuning a copy on the downstream probe…", "stopped": "stopped",
          "exits": "trained; training FastBERT exits on a copy…", "failed": "failed"}


def run_row(job: lab.Job) -> None:
    """A progress bar with the run's state, and its Stop or Resume button."""
    left, right = st.columns([8, 1], vertical_alignment="bottom")
    run, state = job.run, STATUS.get(job.state, job.state)
    if job.state == "training" and run is not None and run.losses:
        state = f"step {run.step:,} of {job.plan.steps:,} · loss {run.losses[-1][1]:.3f}"
    elif job.state == "training":
        state = "cutting the text into windows, first held-out evaluation…"
    elif job.state == "waiting":
        state += f" ({lab.slots()['running']} training on this server now)"
    left.progress(job.fraction, text=f"**{job.label}**: {state}")
    if job.active and right.button("Stop", key=f"lab_stop_{job.label}"):
        lab.stop(job)
        st.rerun()
    if job.state == "stopped" and right.button("Resume", key=f"lab_resume_{job.label}"):
        with ui.guard():  # the server may be full: said in a box, the run stays stopped
            lab.resume(job)
            st.rerun()
    if job.state in ("done", "stopped") and right.button("Save", key=f"lab_save_{job.label}", help=lab.save.__doc__):
        ok, message = lab.save(job)
        (st.success if ok else st.error)(message)
    if job.note and job.state == "failed":
        st.error(ui.markdown_safe(job.note), icon=":material/error:")
    elif job.note:
        st.caption(ui.markdown_safe(job.note))


def live() -> None:
    """Progress bars, curves and the table; rerun every second (alone, not the page) while a run trains."""
    held = lab.jobs()
    if not held:
        st.caption("No runs yet: pick objectives and press Train. Runs stay listed here until cleared.")
        return
    for job in held:
        run_row(job)
    runs = {job.label: lab.snapshot(job) for job in held}
    left, right = st.columns(2)
    with left:
        ui.figure(plots.loss_figure(runs), "lab-training-loss", key="lab_fig_loss")
    with right:
        ui.figure(plots.accuracy_figure(runs), "lab-accuracy", key="lab_fig_accuracy")
    ui.figure(plots.heldout_figure(runs), "lab-heldout-loss", key="lab_fig_heldout")
    table = pd.DataFrame(plots.table_rows(runs))
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption(PROBE_NOTE)
    ui.csv_download(table, "lab-runs", "Download the table (CSV)", key="lab_csv")
    if st.session_state.get("lab_polling") and not any(job.active for job in held):
        st.rerun()  # the last run ended: one full run turns the refresh off
