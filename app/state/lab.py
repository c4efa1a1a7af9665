"""The Pretraining lab's Streamlit glue: a browser session's runs in ``st.session_state``, an upload read once.

Everything else (the run's lifecycle, background workers, fair slots, server-wide bounds, time budgets) is the
library's: :mod:`explorer.training.session` and :mod:`explorer.training.scheduler`. A session keeps at most
:data:`MAX_RUNS` runs; finished runs stay listed until cleared.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from app.caches import models as cache_models
from app.state import liveness
from explorer.core.errors import ExplorerError
from explorer.core.userfiles import read_limited
from explorer.training import checkpoint, corpus, scheduler
from explorer.training.corpus import Corpus
from explorer.training.scheduler import Job, limits, pace, quick, resume, slots, stop

__all__ = ["MAX_RUNS", "Job", "clear", "jobs", "limits", "pace", "quick", "resume", "save", "slots", "snapshot",
           "stop", "submit", "uploaded_corpus"]

MAX_RUNS = 6  # runs a session keeps (each holds a tiny model and its optimizer: a few MB to ~100 MB)
_STATE, _COUNT, _TEXT = "_lab_jobs", "_lab_count", "_lab_text"


def jobs() -> list[Job]:
    """This session's runs, oldest first."""
    return st.session_state.setdefault(_STATE, [])


def submit(objectives: list[str], size: str, steps: int, seed: int, device: str, text: Corpus | None,
           want_exits: bool = False, batch_tokens: int = 2048, seq_len: int = 128) -> list[Job]:
    """Queue one training per objective (same budget, seed and device); refused past :data:`MAX_RUNS`, when a step
    cannot fit this server's memory even in micro-batches, or when the server is full (said before anything runs)."""
    held = jobs()
    if len(held) + len(objectives) > MAX_RUNS:
        raise ExplorerError(f"This session keeps at most {MAX_RUNS} runs and holds {len(held)}: clear finished runs "
                            f"(Clear finished) or pick fewer objectives than {len(objectives)}.")
    plans = scheduler.plans(objectives, size, steps, seed, device, batch_tokens, seq_len)
    probe_spec, exit_spec = scheduler.specs()
    alive, count = liveness.session_probe(), st.session_state.get(_COUNT, 0)
    new = [Job(plan, text, probe_spec, exit_spec if want_exits else None, alive=alive,  # numbered per session
               label=f"#{count + i} {plan.objective} ({plan.size}, seed {plan.seed})")
           for i, plan in enumerate(plans, start=1)]
    scheduler.launch(new)  # the server-wide bound: all admitted, or none and nothing counted
    st.session_state[_COUNT] = count + len(new)
    held.extend(new)
    return new


def clear() -> int:
    """Drop this session's finished, stopped and failed runs; returns how many went."""
    held = jobs()
    keep = [j for j in held if j.active]
    st.session_state[_STATE] = keep
    return len(held) - len(keep)


def snapshot(job: Job) -> dict[str, Any]:
    """The run's record without corpus counts (cheap enough to redraw every second)."""
    return job.record(corpus=False).to_dict()


def uploaded_corpus(upload: Any) -> Corpus:
    """An uploaded text file as a corpus, checked by explorer.training.corpus (size, binary, UTF-8, enough words).

    The last upload's outcome is kept in the session (a corpus or the message), so a rerun does not read
    and split 20 MB again; ``st.cache_data`` would copy the corpus back out on every rerun."""
    seen = st.session_state.get(_TEXT)
    if seen is None or seen[0] != upload.file_id:
        try:
            data = read_limited(upload, corpus.MAX_FILE_BYTES, "The text file")
            seen = (upload.file_id, corpus.from_bytes(data, upload.name))
        except ExplorerError as err:
            seen = (upload.file_id, str(err))
        st.session_state[_TEXT] = seen
    if isinstance(seen[1], str):
        raise ExplorerError(seen[1])
    return seen[1]


def save(job: Job) -> tuple[bool, str]:
    """Save a finished run as a local model (``lab/NAME`` in the models folder): (saved, what to tell the user)."""
    if job.run is None:
        return False, "Nothing to save yet: train at least one step."
    target = checkpoint.default_out(job.plan.objective, job.plan.size, job.run.step, job.plan.seed,
                                    cache_models.models_dir())
    try:
        path = job.save(target)
    except ExplorerError as err:
        return False, str(err)
    also = (" Its FastBERT exits were saved too: measure them on Compression (early exit)."
            if job.exits is not None else "")
    return True, (f"Saved as **lab/{path.name}**: pick it on Fill-mask, Spans & QA, Similarity or Attention maps "
                  f"(listed as \"trained here\").{also}")
