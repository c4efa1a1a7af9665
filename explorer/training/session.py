"""One pretraining run from plan to saved model: the lifecycle the Lab page and ``python -m explorer pretrain`` share.

A :class:`Session` moves through its states in one order, whoever drives it::

    waiting -> building -> training -> [saving] -> probing -> exits -> [saving] -> done
                               \\-> stopped (Stop, a closed tab, a budget: execute() again resumes here)
    any stage -> failed (the driver records the error)

:meth:`Session.execute` runs what is left: build the model (first time), train to the planned step, save when a
target was given up front (the CLI: a checkpoint survives a Ctrl-C in what follows), fine-tune a copy on the
downstream probe, train FastBERT's exits on another copy (saved beside the checkpoint). The Lab gives no target and
saves on request afterwards (:meth:`Session.save`). Drivers only listen (:class:`Hooks`) and say when to stop.

>>> from explorer.training.trainer import Plan
>>> s = Session(Plan("mlm", steps=2, batch_tokens=256, seq_len=32, eval_windows=4))
>>> s.state, s.active, s.fraction
('waiting', True, 0.0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from explorer.core.errors import ExplorerError
from explorer.runtime.cancel import RequestStopped
from explorer.training import checkpoint, downstream, exits, models, record, trainer
from explorer.training.corpus import Corpus
from explorer.training.downstream import ProbeSpec
from explorer.training.exits import Exits, ExitSpec, Report
from explorer.training.trainer import Plan, Progress, Run

__all__ = ["ACTIVE", "Hooks", "STATES", "Session"]

STATES = ("waiting", "building", "training", "saving", "probing", "exits", "done", "stopped", "failed")
ACTIVE = ("waiting", "building", "training", "saving", "probing", "exits")


@dataclass(frozen=True)
class Hooks:
    """What a driver hears: each state as it is entered, the teacher's steps (DistilBERT trains its teacher while
    building), the training steps, the probe's and the exits' fractions; and whether to stop at the next step."""

    state: Callable[[Session], None] | None = None
    teacher: Callable[[Progress], None] | None = None
    progress: Callable[[Progress], None] | None = None
    fraction: Callable[[float, str], None] | None = None
    should_stop: Callable[[], bool] | None = None


@dataclass(eq=False)
class Session:
    """A run's plan, the text it trains on, what follows training (probe, exits; None skips), and where it is."""

    plan: Plan
    text: Corpus | None = None
    probe_spec: ProbeSpec | None = None
    exit_spec: ExitSpec | None = None
    state: str = "waiting"
    run: Run | None = None
    params: int | None = None
    probe: dict[str, object] | None = None  # explorer.training.downstream.ProbeResult.to_dict()
    exits: tuple[Exits, Report] | None = None
    exits_error: str | None = None  # why this model cannot have exits (a one-layer student); the run stays done
    saved: Path | None = None
    note: str | None = None  # what the driver tells the user about it (why it stopped, how a step runs)

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def fraction(self) -> float:
        """Share of the planned steps trained."""
        return 0.0 if self.run is None else min(1.0, self.run.step / self.plan.steps)

    def _enter(self, state: str, hooks: Hooks) -> None:
        self.state = state
        if hooks.state is not None:
            hooks.state(self)

    def execute(self, hooks: Hooks = Hooks(), budget: tuple[int, str] | None = None,
                save_to: str | Path | None = None) -> Session:
        """Run the stages left (see the module's docstring); ``budget`` bounds a training step's memory (bytes,
        where the figure comes from). Errors propagate (the driver decides what a failure shows)."""
        if self.run is None:
            self._enter("building", hooks)
            self.run = trainer.start(self.plan, self.text, on_progress=hooks.teacher, should_stop=hooks.should_stop,
                                     budget=budget)
            self.params, self.note = models.parameters(self.run.model), self.run.notice
        self._enter("training", hooks)
        trainer.advance(self.run, on_progress=hooks.progress, should_stop=hooks.should_stop)
        if not self.run.done:
            self.state = "stopped"
            return self
        if save_to is not None and self.saved is None:
            self._enter("saving", hooks)
            self.saved = checkpoint.save(self.run, save_to)
        self._probe(hooks)
        self._exits(hooks)
        self.state = "done"
        return self

    def _probe(self, hooks: Hooks) -> None:
        """The same fine-tuning budget for every variant (ELECTRA's fair comparison), on a copy of the model."""
        if self.probe_spec is None or self.probe is not None or self.run is None:
            return
        self._enter("probing", hooks)
        result = downstream.probe(self.run.model, self.run.corpus, self.probe_spec, progress=hooks.fraction)
        self.probe = result.to_dict()

    def _exits(self, hooks: Hooks) -> None:
        """FastBERT's exits on a copy of the finished model, saved beside a saved checkpoint; a model that cannot
        have them keeps the reason in :attr:`exits_error` and stays done."""
        if self.exit_spec is None or self.exits is not None or self.exits_error is not None or self.run is None:
            return
        self._enter("exits", hooks)
        try:
            self.exits = exits.train(self.run.model, self.exit_spec, progress=hooks.fraction)
        except RequestStopped:
            raise
        except ExplorerError as err:  # one layer (a tiny DistilBERT student): nothing to exit from
            self.exits_error = str(err)
            return
        if self.saved is not None:
            self._enter("saving", hooks)
            exits.save(*self.exits, self.saved)

    def save(self, target: str | Path) -> Path:
        """Write the trained model (and its exits, when trained) to ``target``; the folder written."""
        if self.run is None or not self.run.step:
            raise ExplorerError("Nothing to save yet: train at least one step.")
        self.saved = checkpoint.save(self.run, target)
        if self.exits is not None:
            exits.save(*self.exits, self.saved)
        return self.saved

    def record(self, corpus: bool = True) -> record.Record:
        """The run's record (``corpus=False``: without the corpus counts, for a page redrawn every second)."""
        return record.of(self.plan, self.run, out=str(self.saved) if self.saved else None, probe=self.probe,
                         exits=self.exits[1].to_dict() if self.exits else None, corpus=corpus)
