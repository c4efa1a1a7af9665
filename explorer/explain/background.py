"""A tuned lens trained in the background on a server, through the Pretraining lab's scheduler.

Training takes minutes on a CPU, longer than a page request may run, so the page queues a :class:`TuningJob`
and redraws what its worker records. The job takes the Lab's machinery as it is
(:mod:`explorer.training.scheduler`): one of the server's training slots (``EXPLORER_LAB_TRAININGS``, fair
order), the server-wide count of queued runs (``EXPLORER_LAB_ACTIVE``), the Lab's time budget per training
(``EXPLORER_LAB_SECONDS``: what was trained by then is kept and saved) and its Stop. One model has at most one
training at a time on the server (a second visitor asking sees the first's progress), and the result is saved
beside the model, where every visitor's lens finds it (:mod:`explorer.explain.translator`).
``EXPLORER_LAB_QUICK`` (the page tests) trains :data:`~explorer.explain.tuning.QUICK_SPEC`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from explorer.explain import task as tasks
from explorer.explain import tuning
from explorer.explain.tuning import TuneReport, TuneSpec
from explorer.runtime import cancel, loading
from explorer.runtime.resolve import ModelRef
from explorer.training import corpus, scheduler

__all__ = ["TuningJob", "job_for", "launch", "spec", "stop"]

_JOBS: dict[tuple[str, str, str, str], TuningJob] = {}  # (model stamp, spec, device, dtype) -> its latest job
MAX_KEPT = 64  # finished jobs remembered (their notes and reports); running ones are always kept
_LOCK = threading.Lock()


@dataclass(eq=False)
class TuningJob:
    """One model's tuned-lens training on the server: what the page shows (state, note, fraction, report)."""

    ref: ModelRef
    spec: TuneSpec
    device: str | None = None
    dtype: str | None = None
    label: str = ""
    alive: Callable[[], bool] = field(default=lambda: True)  # the result is shared: a closed tab does not stop it
    stop_event: threading.Event = field(default_factory=threading.Event)
    state: str = "waiting"
    note: str | None = None
    fraction: float = 0.0
    report: TuneReport | None = None

    @property
    def active(self) -> bool:
        return self.state in ("waiting", "training")


def spec() -> TuneSpec:
    """What a page's training trains (the tests' small spec under ``EXPLORER_LAB_QUICK``)."""
    return tuning.QUICK_SPEC if scheduler.quick() else tuning.DEFAULT_SPEC


def _key(ref: ModelRef, chosen: TuneSpec, device: str | None, dtype: str | None) -> tuple[str, str, str, str]:
    return ref.stamp + ref.spec, repr(chosen), str(device or "auto"), str(dtype or "auto")


def _body(job: TuningJob, token: cancel.CancelToken) -> None:
    job.state, job.note = "training", "Loading the model…"
    loaded = loading.load_model(job.ref, tasks.loading_task(job.ref), device=job.device, dtype=job.dtype,
                                purpose="the tuned lens")

    def progress(fraction: float, text: str) -> None:
        job.fraction, job.note = fraction, text

    job.report = tuning.train(loaded, job.spec, corpus.bundled(), progress=progress,
                              should_stop=lambda: scheduler.should_stop(job, token))
    stopped = job.report.steps < job.spec.steps
    job.state = "stopped" if stopped else "done"
    job.note = (f"{job.note or 'Stopped'} The {job.report.steps} steps trained are saved." if stopped else "")


def _work(job: TuningJob) -> None:
    scheduler.serve(job, _body)


def job_for(ref: ModelRef, chosen: TuneSpec | None = None, device: str | None = None,
            dtype: str | None = None) -> TuningJob | None:
    """The latest tuned-lens training of this model on this server (running or finished), or None."""
    with _LOCK:
        return _JOBS.get(_key(ref, chosen or spec(), device, dtype))


def launch(ref: ModelRef, chosen: TuneSpec | None = None, device: str | None = None,
           dtype: str | None = None) -> TuningJob:
    """Queue a training of ``ref``'s tuned lens (or return the one already queued or running); an ExplorerError
    when the server has as many runs queued as it takes."""
    chosen = (chosen or spec()).checked()
    key = _key(ref, chosen, device, dtype)
    with _LOCK:
        running = _JOBS.get(key)
        if running is not None and running.active:
            return running
        job = TuningJob(ref, chosen, device, dtype, label=f"tuned lens of {ref.spec}")
        scheduler.start([job], _work, prefix="tuned-lens")  # admitted against the server-wide bound, or refused
        _JOBS[key] = job
        for old in [k for k, j in _JOBS.items() if not j.active][: max(0, len(_JOBS) - MAX_KEPT)]:
            del _JOBS[old]
    return job


def stop(job: TuningJob) -> None:
    """Stop at the next step (what was trained is saved)."""
    scheduler.stop(job)
