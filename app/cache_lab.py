"""The pretraining lab's runs: each training in a background worker, held per browser session, capped per server.

A training takes minutes, longer than one script run of Streamlit and longer than a request's
budget (explorer.runtime.cancel), so it cannot run in the script: every run is a :class:`Job` whose
thread calls ``trainer.start`` and ``trainer.advance``, while the page's fragment only reads the
job's :class:`~explorer.training.trainer.Run` (its losses and evaluations, appended step by step)
and redraws. The jobs of a session live in its ``st.session_state`` (at most :data:`MAX_RUNS`;
finished runs stay listed until cleared). Bounds:

- at most :func:`max_trainings` trainings build or train at once on this server (``EXPLORER_LAB_TRAININGS``,
  default 2: two visitors train at once, a third waits in arrival order and is told so);
- at most :func:`explorer.training.admission.max_active` runs are queued or running on the whole server
  (``EXPLORER_LAB_ACTIVE``, default 8), whatever the sessions: every new tab is a new session with its own
  :data:`MAX_RUNS`, so only a process-wide count bounds the queue. Past it, Train and Resume say how many runs
  are training and waiting;
- each training's step is planned within its share of memory before its model is built
  (:func:`budget`: the request memory budget split between the trainings that may run at once, and never more
  than the device's free memory allows; :mod:`explorer.training.memory`): too large for one pass, it is
  accumulated over micro-batches (the run's note says so); too large even so, the run fails with the figure;
- each advance runs under a :class:`~explorer.runtime.cancel.CancelToken`: a time budget
  (``EXPLORER_LAB_SECONDS``, default 30 minutes; the CLI has none), the request memory budget, and the
  session's liveness: a closed tab stops its trainings at their next step (Resume continues them);
- ``EXPLORER_LAB_QUICK=1`` (the page tests) trains on 256-token steps of 32-token windows, so that a
  test run takes seconds; the page says so when it is on.

The library never sees Streamlit: the worker calls the trainer and records what it reports.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import streamlit as st

from app import cache_models, liveness
from explorer.core.errors import ExplorerError
from explorer.core.userfiles import read_limited
from explorer.runtime import cancel
from explorer.runtime.cancel import RequestBudget, RequestStopped
from explorer.training import admission, checkpoint, corpus, exits, memory, models, probe, recipes, trainer
from explorer.training.corpus import Corpus
from explorer.training.trainer import Plan, Progress, Run

__all__ = ["MAX_RUNS", "Job", "budget", "clear", "jobs", "limits", "max_trainings", "pace", "quick", "resume",
           "slots", "snapshot", "stop", "submit", "uploaded_corpus"]

_LOG = logging.getLogger("transformer_explorer")
MAX_RUNS = 6  # runs a session keeps (each holds a tiny model and its optimizer: a few MB to ~100 MB)
DEFAULT_TRAININGS = 2  # trainings at once on the server: two on a 2-core CPU already share it
DEFAULT_SECONDS = 1800.0  # one advance on the server; longer trainings belong to `python -m explorer pretrain`
QUICK = {"batch_tokens": 256, "seq_len": 32, "eval_windows": 4}  # EXPLORER_LAB_QUICK: the tests' small steps
# Seconds per step before this process has measured any (2-core CPU, 2,048 tokens a step). Measured: tiny mlm
# 0.16 s/step on an idle machine (300 steps in 48 s), bert 0.29, albert 0.34, bart ~0.8; "small" is ~4x the
# compute. Rounded up for a machine that also serves pages; the first run replaces it with its own figure.
TYPICAL_CPU_PACE = {"tiny": 0.4, "small": 1.8}
_STATE, _COUNT, _TEXT = "_lab_jobs", "_lab_count", "_lab_text"
ACTIVE = ("waiting", "building", "training", "probing", "exits")
# The tests' probe: a few steps on short windows (the real one is probe.DEFAULT_SPEC, the same for every run).
QUICK_PROBE = probe.ProbeSpec(steps=4, batch=8, seq_len=32, test_examples=16)
QUICK_EXITS = exits.ExitSpec(steps=4, distill_steps=4, batch=8, seq_len=32, test_examples=16)


def _env_number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, "").strip() or default)
    except ValueError:
        return default
    return value if value > 0 else default


def max_trainings() -> int:
    """How many trainings may run at once on this server (``EXPLORER_LAB_TRAININGS``, default 2)."""
    return int(_env_number("EXPLORER_LAB_TRAININGS", DEFAULT_TRAININGS))


def quick() -> bool:
    """Whether the server trains the tests' small steps (``EXPLORER_LAB_QUICK=1``)."""
    return os.environ.get("EXPLORER_LAB_QUICK", "").strip() == "1"


class _Slots:
    """A FIFO semaphore whose waiters can give up (a Stop, a closed tab) instead of timing out."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: collections.deque[object] = collections.deque()
        self.running = 0

    def acquire(self, give_up: Callable[[], bool]) -> bool:
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
            try:
                while True:  # a job given up while queued (or before) never builds
                    if give_up():
                        return False
                    if self._queue[0] is ticket and self.running < max_trainings():
                        break
                    self._cond.wait(0.25)
            finally:
                self._queue.remove(ticket)
                self._cond.notify_all()
            self.running += 1
            return True

    def release(self) -> None:
        with self._cond:
            self.running -= 1
            self._cond.notify_all()

    def waiting(self) -> int:
        return len(self._queue)


_SLOTS = _Slots()
_PACE: dict[tuple[str, str], float] = {}  # (size, device) -> seconds per step, last measured in this process


def slots() -> dict[str, int]:
    """Trainings running and waiting on the whole server, the cap on trainings at once, and the runs admitted
    (queued or running, every session together) with their bound."""
    return {"running": _SLOTS.running, "waiting": _SLOTS.waiting(), "limit": max_trainings(),
            "active": admission.GATE.active, "active_limit": admission.GATE.limit}


def _admit(n: int) -> None:
    """Count ``n`` more runs against the server-wide bound (refused with how many are training and waiting)."""
    admission.GATE.admit(n, detail=f"{_SLOTS.running} training, {_SLOTS.waiting()} waiting for a slot")


def pace(size: str, device: str) -> tuple[float | None, str]:
    """Seconds per step for an estimate, and where the figure comes from."""
    if (size, device) in _PACE:
        return _PACE[size, device], "measured on this server"
    if device == "cpu":
        return TYPICAL_CPU_PACE.get(size), "typical on a 2-core CPU; measured once a run starts"
    return None, "not measured on this device yet"


@dataclass(eq=False)
class Job:
    """One training of a session: its plan, its worker's state and the trainer's Run."""

    label: str
    plan: Plan
    text: Corpus | None
    alive: Callable[[], bool]
    state: str = "waiting"  # waiting, building, training, probing, done, stopped, failed
    run: Run | None = None
    probe: dict[str, Any] | None = None  # the downstream probe of a finished run (explorer.training.probe)
    params: int | None = None
    want_exits: bool = False  # also train FastBERT's exits after the probe (the Compression lab's early exit)
    exits: tuple[exits.Exits, exits.Report] | None = None
    note: str | None = None  # why it stopped or failed, for the page
    stop_event: threading.Event = field(default_factory=threading.Event)

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def fraction(self) -> float:
        return 0.0 if self.run is None else min(1.0, self.run.step / self.plan.steps)


def budget(device: str) -> tuple[int, str]:
    """The memory one Lab training may take: the request memory budget shared by the trainings that may run at
    once, within what the device has free (explorer.training.memory.budget)."""
    request = cancel.request_budget()
    return memory.budget(device, (request.memory_bytes, request.why), share=max_trainings())


def limits(objectives: list[str], size: str, seq_len: int, device: str) -> dict[str, Any]:
    """The largest window, tokens per step in one pass, and tokens per step with accumulation that every one of
    ``objectives`` fits at ``size`` (the page's controls), with the budget they come from."""
    allowed = budget(device)
    names = [recipes.get(o).name for o in objectives] or ["mlm"]
    each = [memory.limits(memory.shape(o, size, seq_len), seq_len, allowed) for o in names]
    return {**{k: min(e[k] for e in each) for k in ("seq_len", "one_pass", "batch_tokens")},
            "budget": allowed[0], "why": allowed[1]}


def _token(job: Job) -> cancel.CancelToken:
    seconds = _env_number("EXPLORER_LAB_SECONDS", DEFAULT_SECONDS)
    memory = cancel.request_budget()
    return cancel.CancelToken(RequestBudget(seconds, memory.memory_bytes, memory.why), job.alive)


def _should_stop(job: Job, token: cancel.CancelToken) -> bool:
    if job.stop_event.is_set():
        job.note = "Stopped: Resume continues from this step."
        return True
    try:
        token.check()
    except RequestStopped as err:
        job.note = str(err) if err.reason != "gone" else "Stopped: the tab was closed or lost its connection."
        return True
    return False


def _train(job: Job) -> None:
    token = _token(job)  # the clock starts with the slot: waiting is not training
    with cancel.scope(token):
        if job.run is None:
            job.state = "building"
            def teacher(p: Progress) -> None:  # only DistilBERT reports here: its teacher trains first
                job.note = f"Training its teacher (BERT MLM) first: step {p.step:,} of {p.steps:,}."

            # thread-safe: it takes the build lock where it must
            job.run = trainer.start(job.plan, job.text, on_progress=teacher,
                                    should_stop=lambda: _should_stop(job, token),
                                    budget=memory.budget(job.plan.device, share=max_trainings()))
            job.note = job.run.notice or ""
            job.params = models.parameters(job.run.model)
        job.state = "training"

        def progress(p: Progress) -> None:
            _PACE[job.plan.size, job.plan.device] = p.seconds / max(1, p.step)

        trainer.advance(job.run, on_progress=progress, should_stop=lambda: _should_stop(job, token))
        if job.run.done and job.probe is None:
            job.state = "probing"  # the same fine-tuning budget for every variant (ELECTRA's fair comparison)
            job.probe = probe.probe(job.run.model, job.run.corpus, QUICK_PROBE if quick() else probe.DEFAULT_SPEC).to_dict()
        if job.run.done and job.want_exits and job.exits is None:
            _train_exits(job)
    job.state = "done" if job.run.done else "stopped"


def _train_exits(job: Job) -> None:
    """FastBERT's exits on a copy of the finished model; a model that cannot have them says why and stays done."""
    assert job.run is not None
    job.state = "exits"

    def progress(fraction: float, text: str) -> None:
        job.note = f"FastBERT exits: {text} ({fraction:.0%})"

    try:
        job.exits = exits.train(job.run.model, QUICK_EXITS if quick() else exits.DEFAULT_SPEC, progress=progress)
        job.note = ""
    except RequestStopped:
        raise
    except ExplorerError as err:  # one layer (a tiny DistilBERT student): nothing to exit from
        job.note = f"No FastBERT exits: {err}"


def _work(job: Job) -> None:
    """The worker thread: wait for a slot, build (first time), train; every outcome ends in a state, and the run
    leaves the server-wide count (it was admitted when queued)."""
    try:
        _slot_and_train(job)
    finally:
        admission.GATE.leave()


def _slot_and_train(job: Job) -> None:
    if not _SLOTS.acquire(lambda: job.stop_event.is_set() or not job.alive()):
        job.state, job.note = "stopped", "Stopped before it started (Stop pressed, or the tab closed)."
        return
    try:
        _train(job)
    except ExplorerError as err:  # bad text, memory refused, the budget ran out inside a step
        job.state, job.note = ("stopped" if isinstance(err, RequestStopped) else "failed"), str(err)
    except Exception:  # a bug: the details go to the server log, the page gets a reference
        ref = uuid.uuid4().hex[:8]
        _LOG.exception("lab training failed (reference %s)", ref)
        job.state, job.note = "failed", f"This training failed (reference `{ref}`); the details are in the server's log."
    finally:
        _SLOTS.release()


def _launch(job: Job) -> None:
    job.stop_event.clear()
    job.state, job.note = "waiting", None
    threading.Thread(target=_work, args=(job,), name=f"lab-{job.label}", daemon=True).start()


def jobs() -> list[Job]:
    """This session's runs, oldest first."""
    return st.session_state.setdefault(_STATE, [])


def submit(objectives: list[str], size: str, steps: int, seed: int, device: str, text: Corpus | None,
           want_exits: bool = False, batch_tokens: int = 2048, seq_len: int = 128) -> list[Job]:
    """Queue one training per objective (same budget, seed and device); refused past :data:`MAX_RUNS`, and when
    a step cannot fit this server's memory even in micro-batches (said before anything is queued)."""
    held = jobs()
    picked = [recipes.get(o).name for o in objectives]
    if not picked:
        raise ExplorerError("Pick at least one objective to train.")
    if len(held) + len(picked) > MAX_RUNS:
        raise ExplorerError(f"This session keeps at most {MAX_RUNS} runs and holds {len(held)}: clear finished runs "
                            f"(Clear finished) or pick fewer objectives than {len(picked)}.")
    plans = [Plan(o, size=size, steps=steps, seed=seed, device=device, batch_tokens=int(batch_tokens),
                  seq_len=int(seq_len)).checked() for o in picked]
    if quick():
        plans = [replace(p, **QUICK) for p in plans]
    for plan in plans:  # the same plan the worker makes: a step that cannot fit is refused now, not queued
        memory.step_plan(plan, budget(device))
    _admit(len(plans))  # the server-wide bound, last: nothing is counted for a refused submit
    alive, new = liveness.session_probe(), []
    for plan in plans:  # numbered per session, so two runs of one objective stay apart in every figure
        st.session_state[_COUNT] = st.session_state.get(_COUNT, 0) + 1
        new.append(Job(f"#{st.session_state[_COUNT]} {plan.objective} ({plan.size}, seed {plan.seed})", plan, text,
                       alive, want_exits=want_exits))
    for job in new:
        held.append(job)
        _launch(job)
    return new


def stop(job: Job) -> None:
    """Ask the worker to stop at its next step (or to leave the queue)."""
    job.stop_event.set()


def resume(job: Job) -> None:
    """Continue a stopped run where it left off (trainer.advance on the same Run); it queues again, so it counts
    against the server-wide bound (an ExplorerError when the server is full)."""
    if job.state == "stopped":
        _admit(1)
        _launch(job)


def clear() -> int:
    """Drop this session's finished, stopped and failed runs; returns how many went."""
    held = jobs()
    keep = [j for j in held if j.active]
    st.session_state[_STATE] = keep
    return len(held) - len(keep)


def snapshot(job: Job) -> dict[str, Any]:
    """The run as the trainer's summary reports it (no corpus counts: cheap enough to redraw every second)."""
    run = job.run
    out: dict[str, Any] = {"objective": job.plan.objective, "size": job.plan.size, "params": job.params, "steps": 0,
                           "tokens_seen": 0, "flops": 0.0, "seconds": 0.0, "losses": [], "eval": {"history": []}}
    if run is not None:  # lists are copied: the worker appends to them while the page draws
        out.update(steps=run.step, tokens_seen=run.tokens_seen, flops=run.flops, seconds=run.seconds,
                   losses=[list(p) for p in list(run.losses)], eval={"history": list(run.evals), "probe": job.probe})
    if job.exits is not None:
        out["exits"] = job.exits[1].to_dict()
    return out


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
    if job.run is None or not job.run.step:
        return False, "Nothing to save yet: train at least one step."
    plan, run = job.plan, job.run
    target = checkpoint.default_out(plan.objective, plan.size, run.step, plan.seed, cache_models.models_dir())
    try:
        path = checkpoint.save(run, target)
        if job.exits is not None:
            exits.save(*job.exits, path)
    except ExplorerError as err:
        return False, str(err)
    also = (" Its FastBERT exits were saved too: measure them on Compression (early exit)."
            if job.exits is not None else "")
    return True, (f"Saved as **lab/{path.name}**: pick it on Fill-mask, Spans & QA, Similarity or Attention maps "
                  f"(listed as \"trained here\").{also}")
