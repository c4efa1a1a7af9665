"""What the claims table is computed from: trained lab runs, their probe scores, floors and a speed ratio.

:func:`measure` trains every objective a claim needs through :mod:`explorer.training.trainer` on
the same budget (ELECTRA on the same *FLOPs* as BERT's MLM: fewer steps, since each step runs a
generator too), scores each on :mod:`explorer.training.downstream`, and times the DistilBERT student
against its teacher in the same run. An objective whose loss family has not landed in
:data:`explorer.training.lossfamilies.FAMILIES` is listed in ``missing`` instead of crashing: the
integrator's rerun fills it in once the family is merged.

The result is plain numbers (:class:`~explorer.training.figures.Measurement`, JSON round-trip), so the table
(:mod:`explorer.papers.claims`) is a pure function of it and is tested on a fake one.
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import replace

import torch

from explorer.core.errors import ExplorerError
from explorer.core.timing import interleaved
from explorer.training import batches, downstream, lossfamilies, recipes, trainer, vocab
from explorer.training.corpus import Corpus
from explorer.training.downstream import ProbeSpec
from explorer.training.figures import Measurement, VariantRun

__all__ = ["NEEDED", "heldout_mlm_loss", "measure", "trainable"]

NEEDED = ("mlm", "bert", "roberta", "albert", "electra", "distilbert")  # every objective a claim reads
PROBED = ("mlm", "bert", "roberta", "albert", "electra", "distilbert")
FLOORED = ("mlm", "electra", "distilbert")  # floors the verdicts read (one per architecture a claim probes)
SPEED_ROUNDS = 20


def trainable(objective: str) -> bool:
    """Whether ``objective``'s loss family is in this build (checked at run time: families land by merges)."""
    return recipes.get(objective).loss in lossfamilies.FAMILIES


def heldout_mlm_loss(run: trainer.Run) -> float:
    """Masked-LM cross-entropy on the trainer's held-out windows, without NSP/SOP, RTD or distillation terms."""
    return trainer.evaluate(run)["lm_loss"]


def _variant(run: trainer.Run, result: downstream.ProbeResult | None) -> VariantRun:
    windows = batches.windows(run.corpus, "train", run.plan.seq_len)
    return VariantRun(run.recipe.name, run.recipe.label, run.step, sum(p.numel() for p in run.model.parameters()),
                   run.tokens_seen, run.flops, round(run.seconds, 2), round(run.position / max(len(windows), 1), 4),
                   run.evals[0]["loss"], run.evals[-1]["loss"], heldout_mlm_loss(run),
                   None if result is None else result.accuracy, None if result is None else result.stderr)


def _train(plan: trainer.Plan, text: Corpus | None, say: Callable[[str], None]) -> trainer.Run:
    say(f"training {plan.objective} for {plan.steps} steps")
    run = trainer.advance(trainer.start(plan, text))
    say(f"{plan.objective}: held-out loss {run.evals[0]['loss']:.2f} -> {run.evals[-1]['loss']:.2f} in "
        f"{run.seconds:.0f} s")
    return run


def _equal_flops(plan: trainer.Plan, reference: trainer.Run) -> trainer.Plan:
    """``plan`` with as many steps as spend ``reference``'s training FLOPs (one more build to read the cost)."""
    per_token = trainer.start(plan).flops_per_token
    tokens_per_step = reference.tokens_seen / max(reference.step, 1)  # a batch fills to just over batch_tokens
    return replace(plan, steps=max(1, round(reference.flops / (per_token * tokens_per_step))))


def _teacher(run: trainer.Run, runs: dict[str, trainer.Run]) -> torch.nn.Module | None:
    """The distillation family's own teacher (``model.teacher``), else the MLM run of the same budget."""
    teacher = getattr(run.model, "teacher", None)
    if isinstance(teacher, torch.nn.Module):
        return teacher
    return runs["mlm"].model if "mlm" in runs else None


def _speed(teacher: torch.nn.Module, student: torch.nn.Module, seq_len: int) -> dict[str, float]:
    """Median forward milliseconds of both encoders on the same batch, timed in interleaved rounds."""
    tok = vocab.tokenizer()
    ids = torch.tensor([tok.convert_tokens_to_ids(["[CLS]", *["the"] * (seq_len - 2), "[SEP]"])] * 8)  # (8, T)
    mask = torch.ones_like(ids)
    encoders = [downstream.encoder_of(m).module.eval() for m in (teacher, student)]
    device = next(encoders[0].parameters()).device
    ids, mask = ids.to(device), mask.to(device)

    def call(encoder: torch.nn.Module) -> Callable[[], object]:
        return lambda: encoder(input_ids=ids, attention_mask=mask)

    with torch.no_grad():
        times = interleaved([call(e) for e in encoders], SPEED_ROUNDS)
    for e in encoders:
        e.train()
    t_ms, s_ms = (statistics.median(t) * 1000 for t in times)
    return {"teacher_ms": round(t_ms, 3), "student_ms": round(s_ms, 3), "ratio": round(t_ms / s_ms, 3)}


def _machine(note: str) -> str:
    return (f"{platform.machine()} {os.cpu_count()} cores, torch {torch.__version__}, "
            f"{torch.get_num_threads()} thread(s){'; ' + note if note else ''}")


def measure(budget_steps: int = 150, seed: int = 0, progress: Callable[[str], None] | None = None, *,
            size: str = "tiny", batch_tokens: int = 2048, seq_len: int = 128, device: str = "cpu",
            spec: ProbeSpec = downstream.DEFAULT_SPEC, objectives: tuple[str, ...] = NEEDED, machine: str = "",
            text: Corpus | None = None) -> Measurement:
    """Train what the claims need on ``budget_steps`` steps each (ELECTRA: BERT MLM's FLOPs), probe, time."""
    say = progress or (lambda _text: None)
    if not 1 <= budget_steps <= trainer.MAX_STEPS:
        raise ExplorerError(f"The budget must be 1 to {trainer.MAX_STEPS:,} steps (got {budget_steps}).")
    tic = time.perf_counter()
    base = trainer.Plan("mlm", size, budget_steps, seed, device, batch_tokens, seq_len, eval_windows=64)
    missing = {o: recipes.get(o).loss for o in objectives if not trainable(o)}
    runs: dict[str, trainer.Run] = {}
    for objective in (o for o in objectives if o not in missing):
        plan = replace(base, objective=objective)
        if objective == "electra" and "mlm" in runs:
            plan = _equal_flops(plan, runs["mlm"])
        runs[objective] = _train(plan, text, say)
    scores: dict[str, downstream.ProbeResult] = {}
    for objective in (o for o in PROBED if o in runs):
        say(f"probing {objective}")
        scores[objective] = downstream.probe(runs[objective].model, runs[objective].corpus, spec)
    floors = {}
    for objective in (o for o in FLOORED if o in runs):
        say(f"probing a randomly initialised {objective} (the floor)")
        floors[objective] = downstream.floor(objective, size, runs[objective].corpus, spec, seed, device).accuracy
    timing, teacher_score = None, None
    teacher = _teacher(runs["distilbert"], runs) if "distilbert" in runs else None
    if teacher is not None:
        say("timing the DistilBERT student against its teacher")
        timing = _speed(teacher, runs["distilbert"].model, seq_len)
        teacher_score = downstream.probe(teacher, runs["distilbert"].corpus, spec).accuracy
    return Measurement(datetime.date.today().isoformat(), size, budget_steps, seed, batch_tokens, seq_len, device,
                       _machine(machine), spec.to_dict(),
                       {o: _variant(r, scores.get(o)) for o, r in runs.items()}, floors, missing, timing,
                       teacher_score, round(time.perf_counter() - tic, 1))
