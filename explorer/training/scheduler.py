"""The Lab's runs on a server: each :class:`~explorer.training.session.Session` trains in a background thread,
queued fairly, bounded per server, stopped by its visitor. Other background trainings (a tuned lens) take the same
slots, bound and budget through :func:`serve` and :func:`start`: anything with the fields of :class:`Queued`.

A training takes minutes, longer than a page's script run and than a request's budget, so the page only queues a
:class:`Job` (:func:`launch`) and redraws what its thread records. Bounds:

- at most :func:`max_trainings` trainings build or train at once (``EXPLORER_LAB_TRAININGS``, default 2: two
  visitors train at once, a third waits in arrival order, :class:`explorer.runtime.workers.FairSlots`);
- at most :func:`explorer.training.admission.max_active` runs queued or running on the whole server
  (``EXPLORER_LAB_ACTIVE``): every browser tab is a new session, so only a process-wide count bounds the queue;
- each training's step is planned within its share of memory before its model is built (:func:`budget`);
- each advance runs under a :class:`~explorer.runtime.cancel.CancelToken`: a time budget (``EXPLORER_LAB_SECONDS``,
  default 30 minutes; the CLI has none), the request memory budget, and the visitor's liveness (a closed tab stops
  its trainings at their next step; Resume continues them);
- ``EXPLORER_LAB_QUICK=1`` (the page tests) trains 256-token steps of 32-token windows and probes briefly.

>>> job = Job(Plan("mlm"), label="#1 mlm (tiny, seed 0)", alive=lambda: False)
>>> work(job)  # the visitor left before a slot came: it never builds, and leaves the server's count
>>> job.state, job.run is None
('stopped', True)
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, TypedDict, TypeVar

from explorer.core import settings
from explorer.core.errors import ExplorerError
from explorer.runtime import cancel
from explorer.runtime.cancel import RequestBudget, RequestStopped
from explorer.runtime.workers import FairSlots
from explorer.training import admission, downstream, exits, recipes, stepmemory
from explorer.training.session import Hooks, Session
from explorer.training.trainer import Plan, Progress

__all__ = ["QUICK_STEP", "Fits", "Job", "Queued", "budget", "launch", "limits", "max_trainings",
           "pace", "plans", "quick", "resume", "serve", "should_stop", "slots", "specs", "start", "stop", "work"]

_LOG = logging.getLogger("transformer_explorer")
QUICK_STEP = (256, 32, 4)  # EXPLORER_LAB_QUICK: the tests' small steps (tokens per step, window, held-out windows)
# The tests' probe and exits: a few steps on short windows (the real ones are the same for every run).
QUICK_PROBE = downstream.ProbeSpec(steps=4, batch=8, seq_len=32, test_examples=16)
QUICK_EXITS = exits.ExitSpec(steps=4, distill_steps=4, batch=8, seq_len=32, test_examples=16)
# Seconds per step before this process has measured any (2-core CPU, 2,048 tokens a step). Measured: tiny mlm
# 0.16 s/step on an idle machine (300 steps in 48 s), bert 0.29, albert 0.34, bart ~0.8; "small" is ~4x the
# compute. Rounded up for a machine that also serves pages; the first run replaces it with its own figure.
TYPICAL_CPU_PACE = {"tiny": 0.4, "small": 1.8}

_SLOTS = FairSlots()
_PACE: dict[tuple[str, str], float] = {}  # (size, device) -> seconds per step, last measured in this process


def max_trainings() -> int:
    """How many trainings may run at once on this server (``EXPLORER_LAB_TRAININGS``, default 2)."""
    return settings.LAB_TRAININGS.value()


def quick() -> bool:
    """Whether the server trains the tests' small steps (``EXPLORER_LAB_QUICK``)."""
    return settings.LAB_QUICK.value()


class Queued(Protocol):
    """What the scheduler needs of a background job: its label (the thread's name), whether its visitor still
    wants it, its Stop, and where it is (the worker writes ``state`` and ``note``; the page reads them)."""

    label: str
    stop_event: threading.Event
    state: str
    note: str | None

    @property
    def alive(self) -> Callable[[], bool]: ...


Q = TypeVar("Q", bound=Queued)


@dataclass(eq=False)
class Job(Session):
    """A session trained for a visitor: its label on the page, whether its tab is still open, its Stop."""

    label: str = ""
    alive: Callable[[], bool] = field(default=lambda: True)
    stop_event: threading.Event = field(default_factory=threading.Event)


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


def budget(device: str) -> tuple[int, str]:
    """The memory one Lab training may take: the request memory budget shared by the trainings that may run at
    once, within what the device has free (:func:`explorer.training.stepmemory.budget`)."""
    request = cancel.request_budget()
    return stepmemory.budget(device, (request.memory_bytes, request.why), share=max_trainings())


class Fits(TypedDict):
    """What :func:`limits` returns: the largest settings (tokens) and the memory budget (bytes) they come from."""

    seq_len: int
    one_pass: int
    batch_tokens: int
    budget: int
    why: str


def limits(objectives: list[str], size: str, seq_len: int, device: str) -> Fits:
    """The largest window, tokens per step in one pass, and tokens per step with accumulation that every one of
    ``objectives`` fits at ``size`` (the page's controls), with the budget they come from."""
    allowed = budget(device)
    names = [recipes.get(o).name for o in objectives] or ["mlm"]
    each = [stepmemory.limits(stepmemory.shape(o, size, seq_len), seq_len, allowed) for o in names]
    return Fits(seq_len=min(e["seq_len"] for e in each), one_pass=min(e["one_pass"] for e in each),
                batch_tokens=min(e["batch_tokens"] for e in each), budget=allowed[0], why=allowed[1])


def plans(objectives: list[str], size: str, steps: int, seed: int, device: str, batch_tokens: int,
          seq_len: int) -> list[Plan]:
    """One checked plan per objective (same budget, seed and device), each step's memory planned: a step that
    cannot fit even in micro-batches is refused here, before anything is queued."""
    picked = [recipes.get(o).name for o in objectives]
    if not picked:
        raise ExplorerError("Pick at least one objective to train.")
    made = [Plan(o, size=size, steps=steps, seed=seed, device=device, batch_tokens=int(batch_tokens),
                 seq_len=int(seq_len)).checked() for o in picked]
    if quick():
        tokens, window, held_out = QUICK_STEP
        made = [replace(p, batch_tokens=tokens, seq_len=window, eval_windows=held_out) for p in made]
    for plan in made:
        stepmemory.step_plan(plan, budget(device))
    return made


def _token(job: Queued) -> cancel.CancelToken:
    seconds = settings.LAB_SECONDS.value()
    request = cancel.request_budget()
    return cancel.CancelToken(RequestBudget(seconds, request.memory_bytes, request.why), job.alive)


def should_stop(job: Queued, token: cancel.CancelToken) -> bool:
    """Whether a background job must stop at this step (Stop pressed, its tab gone, its budget spent); the reason
    goes to ``job.note``."""
    if job.stop_event.is_set():
        job.note = "Stopped: Resume continues from this step."
        return True
    try:
        token.check()
    except RequestStopped as err:
        job.note = str(err) if err.reason != "gone" else "Stopped: the tab was closed or lost its connection."
        return True
    return False


def _hooks(job: Job, token: cancel.CancelToken) -> Hooks:
    """The page reads the job's state and notes; the worker records the pace of its steps for estimates."""
    def teacher(p: Progress) -> None:  # only DistilBERT reports here: its teacher trains first
        job.note = f"Training its teacher (BERT MLM) first: step {p.step:,} of {p.steps:,}."

    def progress(p: Progress) -> None:
        _PACE[job.plan.size, job.plan.device] = p.seconds / max(1, p.step)

    def fraction(share: float, text: str) -> None:
        if job.state == "exits":
            job.note = f"FastBERT exits: {text} ({share:.0%})"

    return Hooks(teacher=teacher, progress=progress, fraction=fraction, should_stop=lambda: should_stop(job, token))


def _train(job: Job, token: cancel.CancelToken) -> None:
    job.execute(_hooks(job, token), budget=stepmemory.budget(job.plan.device, share=max_trainings()))
    if job.exits_error:
        job.note = f"No FastBERT exits: {job.exits_error}"
    elif job.state == "done":
        job.note = job.note if job.note and not job.note.startswith("FastBERT exits:") else ""


def serve(job: Q, body: Callable[[Q, cancel.CancelToken], None]) -> None:
    """The worker of any background job: wait for a slot, run ``body(job, token)`` under the job's budget and
    liveness, and end in a state whatever happens; the job leaves the server's count (it was admitted when
    queued)."""
    try:
        if not _SLOTS.wait_turn(max_trainings, lambda: job.stop_event.is_set() or not job.alive()):
            job.state, job.note = "stopped", "Stopped before it started (Stop pressed, or the tab closed)."
            return
        try:
            token = _token(job)  # the clock starts with the slot: waiting is not training
            with cancel.scope(token):
                body(job, token)
        except ExplorerError as err:  # bad text, memory refused, the budget ran out inside a step
            job.state, job.note = ("stopped" if isinstance(err, RequestStopped) else "failed"), str(err)
        except Exception:  # a bug: the details go to the server log, the page gets a reference
            ref = uuid.uuid4().hex[:8]
            _LOG.exception("background training %s failed (reference %s)", job.label, ref)
            job.state, job.note = "failed", (f"This training failed (reference `{ref}`); "
                                             "the details are in the server's log.")
        finally:
            _SLOTS.release()
    finally:
        admission.GATE.leave()


def work(job: Job) -> None:
    """The Lab's worker: wait for a slot, build (first time), train, probe, exits (:func:`serve`)."""
    serve(job, _train)


def launch(new: list[Job]) -> None:
    """Queue ``new`` Lab jobs (all admitted against the server-wide bound, or none) and start their workers."""
    start(new, work)


def start(new: Sequence[Q], worker: Callable[[Q], None], prefix: str = "lab") -> None:
    """Queue background jobs (all admitted against the server-wide bound, or none) and start ``worker(job)`` for
    each in its own thread (``worker`` calls :func:`serve`)."""
    _admit(len(new))
    for job in new:
        _start(job, worker, prefix)


def _start(job: Q, worker: Callable[[Q], None], prefix: str = "lab") -> None:
    job.stop_event.clear()
    job.state, job.note = "waiting", None
    threading.Thread(target=worker, args=(job,), name=f"{prefix}-{job.label}", daemon=True).start()


def stop(job: Queued) -> None:
    """Ask the worker to stop at its next step (or to leave the queue)."""
    job.stop_event.set()


def resume(job: Job) -> None:
    """Continue a stopped run where it left off; it queues again, so it counts against the server-wide bound (an
    ExplorerError when the server is full)."""
    if job.state == "stopped":
        _admit(1)
        _start(job, work)


def specs() -> tuple[downstream.ProbeSpec, exits.ExitSpec]:
    """The probe and exits every Lab run gets (the tests' small ones under EXPLORER_LAB_QUICK)."""
    return (QUICK_PROBE, QUICK_EXITS) if quick() else (downstream.DEFAULT_SPEC, exits.DEFAULT_SPEC)
