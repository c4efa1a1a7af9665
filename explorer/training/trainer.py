"""The lab's one training loop: any recipe, a shared token budget, held-out evaluation, stop and resume.

A :class:`Run` holds everything a run needs to go on (model, optimizer, schedule, position in
the data), so :func:`advance` can stop at any step (a Stop button, a closed tab, Ctrl-C) and a
later call continues exactly where it left off. Compute is counted with the project's cost
model: training FLOPs = 3 x forward FLOPs per token (backward costs twice the forward) x tokens.

Memory is planned before anything is built (:mod:`explorer.training.stepmemory`): a step that does not fit the
budget in one pass runs as micro-batches whose gradients are accumulated (``Run.notice`` says so), and one
that does not fit at all is refused with the figure and the largest setting that fits.

>>> run = start(Plan("mlm", steps=2, batch_tokens=256, seq_len=32, eval_windows=4))
>>> run = advance(run)
>>> run.step, len(run.losses), run.tokens_seen >= 512
(2, 2, True)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from explorer.core.errors import ExplorerError
from explorer.training import batches, corpus, lossfamilies, models, recipes, stepmemory, vocab
from explorer.training.corpus import Corpus
from explorer.training.recipes import Recipe

__all__ = ["MAX_STEPS", "Plan", "Progress", "Run", "advance", "evaluate", "start"]

MAX_STEPS = 20_000  # ~3 hours of a tiny model on 2 CPU cores; a bigger budget belongs in a real trainer
EVAL_BATCH = 16  # held-out windows per evaluation pass (fewer when a training pass holds fewer)
_NSP_POOL = 2_000  # sentences of other windows that NSP draws its random "B" from


@dataclass(frozen=True)
class Plan:
    """What to train: objective, size, budget, seed, device. ``batch_tokens`` tokens per step."""

    objective: str
    size: str = "tiny"
    steps: int = 300
    seed: int = 0
    device: str = "cpu"
    batch_tokens: int = 2048  # 16 windows of 128: 300 steps of a tiny model fit in ~3 minutes on 2 CPU cores
    seq_len: int = 128
    lr: float = 1e-3  # tiny models tolerate (and need) a larger rate than BERT-base's 1e-4
    warmup: float = 0.06  # share of the steps with a linear warm-up, then linear decay to 0
    eval_every: int = 0  # 0: ten evaluations over the run
    eval_windows: int = 64
    teacher: str | None = None  # distilbert: a saved lab mlm checkpoint directory; None: one is trained first

    def checked(self) -> Plan:
        """The plan with the recipe name resolved; bad numbers say what is allowed."""
        recipe = recipes.get(self.objective)
        if not isinstance(self.steps, int) or not 1 <= self.steps <= MAX_STEPS:
            raise ExplorerError(f"Steps must be a whole number from 1 to {MAX_STEPS:,} (got {str(self.steps)[:20]}).")
        if not 16 <= self.seq_len <= models.MAX_POSITIONS:
            raise ExplorerError(f"Sequence length must be 16 to {models.MAX_POSITIONS} tokens (got {self.seq_len}).")
        if not isinstance(self.batch_tokens, int) or self.batch_tokens < self.seq_len:
            # the most a step may hold comes from memory (explorer.training.stepmemory), checked before building
            raise ExplorerError(f"Tokens per step must be at least one window ({self.seq_len}); got "
                                f"{str(self.batch_tokens)[:20]}.")
        if not 0 <= self.seed < 2**31:
            raise ExplorerError(f"The seed must be 0 to {2**31 - 1} (got {self.seed}).")
        recipes.overrides(recipe.name, self.size)
        return replace(self, objective=recipe.name)


@dataclass(frozen=True)
class Progress:
    """One step's report: what a progress bar and a live curve need."""

    step: int
    steps: int
    loss: float
    tokens_seen: int
    flops: float
    seconds: float
    eval: dict[str, float] | None = None
    part: tuple[int, int] | None = None  # (pass, passes) inside an accumulated step that is still running


@dataclass
class Run:
    """A run in progress (or finished): everything :func:`advance` needs to go on."""

    plan: Plan
    recipe: Recipe
    corpus: Corpus
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    schedule: torch.optim.lr_scheduler.LambdaLR
    flops_per_token: float
    step: int = 0
    position: int = 0  # windows consumed: where the data stream resumes
    tokens_seen: int = 0
    seconds: float = 0.0
    micro_tokens: int = 0  # padded tokens one forward pass may hold (stepmemory.StepPlan); 0: no limit
    notice: str | None = None  # how the step runs when it is accumulated over micro-batches
    losses: list[tuple[int, float]] = field(default_factory=list)
    evals: list[dict[str, float]] = field(default_factory=list)

    @property
    def flops(self) -> float:
        return self.flops_per_token * self.tokens_seen

    @property
    def done(self) -> bool:
        return self.step >= self.plan.steps


def _lr_lambda(plan: Plan) -> Callable[[int], float]:
    warm = max(1, round(plan.warmup * plan.steps))
    return lambda s: min((s + 1) / warm, max(0.0, (plan.steps - s) / max(1, plan.steps - warm)))


def _teacher(plan: Plan, text: Corpus, given: Run | None, objective: str,
             on_progress: Callable[[Progress], None] | None, should_stop: Callable[[], bool] | None,
             budget: tuple[int, str] | None = None) -> torch.nn.Module | str:
    """A distilling family's teacher: ``given``'s model, else ``plan.teacher`` (a saved directory), else a
    ``objective`` model trained here first with this plan's own steps, seed and budget."""
    if given is not None:
        return given.model
    if plan.teacher:
        return plan.teacher
    run = advance(start(replace(plan, objective=objective, teacher=None), text, budget=budget),
                  on_progress=on_progress, should_stop=should_stop)
    if not run.done:  # a student of a half-trained teacher would not be the run that was asked for
        raise ExplorerError("Stopped while its teacher was training; nothing was kept. Train it again to start over.")
    return run.model


def check_text(text: Corpus, seq_len: int) -> None:
    """Both splits of ``text`` give windows of ``seq_len`` tokens (cut once and cached: the training reuses them)."""
    for split, what in (("train", "training"), ("heldout", "held-out")):
        if not batches.windows(text, split, seq_len):
            raise ExplorerError(f"The text gives no {what} windows of {seq_len} tokens; give a longer text file.")


def start(plan: Plan, text: Corpus | None = None, teacher: Run | None = None,
          on_progress: Callable[[Progress], None] | None = None, should_stop: Callable[[], bool] | None = None,
          budget: tuple[int, str] | None = None) -> Run:
    """Build the model (after planning the step's memory and checking the text) and the optimizer; nothing trained yet.

    ``budget``: (bytes, where the figure comes from) a step may take; default :func:`stepmemory.budget` of the device.
    DistilBERT learns from ``teacher`` (a finished mlm run), else ``plan.teacher``, else a teacher trained
    first: ``on_progress`` and ``should_stop`` then see that teacher's steps.
    """
    plan = plan.checked()
    recipe = recipes.get(plan.objective)
    step = stepmemory.step_plan(plan, budget)  # before anything is built: refused, or accumulated over micro-batches
    family, text = lossfamilies.get(recipe.loss), text or corpus.bundled()
    check_text(text, plan.seq_len)
    extra = {"teacher": _teacher(plan, text, teacher, family.teacher, on_progress, should_stop, budget)} \
        if family.teacher else {}
    model = family.build(recipe, plan.size, plan.seed, plan.device, **extra)
    optimizer = torch.optim.AdamW(model.parameters(), lr=plan.lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, _lr_lambda(plan))
    per_token = family.forward_flops(model, plan.seq_len)
    return Run(plan, recipe, text, model, optimizer, schedule, 3.0 * per_token, micro_tokens=step.micro_tokens,
               notice=step.notice)


def _maker(run: Run, split: str) -> tuple[tuple[batches.Window, ...], Callable[[int, int], dict[str, Any]]]:
    windows = batches.windows(run.corpus, split, run.plan.seq_len)
    if not windows:
        raise ExplorerError("The text gives no training windows; give a longer text file.")
    tok = vocab.tokenizer()
    pool = tuple(w[1:-1][:40] for w in windows[:: max(1, len(windows) // _NSP_POOL)])
    objective_vocab = vocab.objective_vocab(pool)
    features = lossfamilies.get(run.recipe.loss).features
    seed = run.plan.seed if split == "train" else 12345  # held-out corruption is the same for every run
    offset = 0 if split == "train" else 10**9

    def make(epoch: int, index: int) -> dict[str, Any]:
        return features(run.recipe, windows[index], seed, index + offset, epoch, tok, objective_vocab)
    return windows, make


def evaluate(run: Run) -> dict[str, float]:
    """Held-out loss and accuracy on the same corrupted windows for every run.

    ``loss``/``accuracy`` are the objective's own (ELECTRA: MLM + 50 x RTD, and the discriminator's token
    accuracy). ``lm_loss``/``lm_accuracy`` are what compares across objectives: the language-model
    cross-entropy and token accuracy, i.e. the masked-LM part where an objective adds other terms (NSP, SOP,
    RTD, SBO, distillation) and ELECTRA's generator accuracy; for T5, BART and GPT the two are the same.
    """
    windows, make = _maker(run, "heldout")
    n = min(run.plan.eval_windows, len(windows))
    per = max(1, min(EVAL_BATCH, run.micro_tokens // run.plan.seq_len)) if run.micro_tokens else EVAL_BATCH
    run.model.eval()
    total = lm = predicted = correct = lm_correct = lm_predicted = 0.0
    with torch.no_grad():
        for lo in range(0, n, per):
            batch = {k: v.to(run.plan.device)
                     for k, v in batches.collate([make(0, i) for i in range(lo, min(n, lo + per))]).items()}
            out = lossfamilies.get(run.recipe.loss).loss(run.model, batch)
            weight = max(out.predicted, 1)
            total += float(out.total) * weight
            lm += out.parts.get("mlm", float(out.total)) * weight
            predicted += weight
            correct += out.correct
            masked = out.parts.get("masked", out.predicted)  # ELECTRA: the generator's positions
            lm_correct += out.parts.get("generator_accuracy", out.correct / weight) * masked
            lm_predicted += masked
    run.model.train()
    loss = total / max(predicted, 1)
    return {"step": run.step, "loss": loss, "perplexity": math.exp(min(loss, 50.0)),
            "accuracy": correct / predicted if predicted else 0.0, "lm_loss": lm / max(predicted, 1),
            "lm_accuracy": lm_correct / lm_predicted if lm_predicted else 0.0, "tokens_seen": run.tokens_seen,
            "flops": run.flops, "seconds": run.seconds}


def _step(run: Run, examples_: list[dict[str, Any]], on_progress: Callable[[Progress], None] | None,
          should_stop: Callable[[], bool] | None, tic: float) -> float | None:
    """Forward and backward over the step's examples, one pass per micro-batch (gradients accumulated, each pass
    weighted by its share of the tokens), then the optimizer's step; the loss, or None when stopped mid-step."""
    parts = batches.split(examples_, run.micro_tokens) if run.micro_tokens else [examples_]
    real = sum(len(ex["input_ids"]) for ex in examples_)
    loss_fn = lossfamilies.get(run.recipe.loss).loss
    run.optimizer.zero_grad(set_to_none=True)
    loss = done = 0.0  # the weighted loss and the share of the tokens of the passes so far
    for i, part in enumerate(parts):
        if i and should_stop and should_stop():  # a long accumulated step stops between its passes
            run.optimizer.zero_grad(set_to_none=True)
            return None
        batch = {k: v.to(run.plan.device) for k, v in batches.collate(part).items()}
        out = loss_fn(run.model, batch)
        share = sum(len(ex["input_ids"]) for ex in part) / real if len(parts) > 1 else 1.0
        (out.total * share if len(parts) > 1 else out.total).backward()
        loss, done = loss + share * float(out.total.detach()), done + share
        del batch, out
        if on_progress and len(parts) > 1 and i + 1 < len(parts):  # the loss of the passes so far, as a mean
            elapsed = run.seconds + time.perf_counter() - tic
            on_progress(Progress(run.step, run.plan.steps, loss / done, run.tokens_seen, run.flops, elapsed, None,
                                 (i + 1, len(parts))))
    torch.nn.utils.clip_grad_norm_(run.model.parameters(), 1.0)
    run.optimizer.step()
    run.schedule.step()
    run.tokens_seen += real
    return loss


def advance(run: Run, until: int | None = None, on_progress: Callable[[Progress], None] | None = None,
            should_stop: Callable[[], bool] | None = None) -> Run:
    """Train to step ``until`` (default: the plan's last); ``should_stop`` is asked before every step (and between
    the micro-batches of an accumulated one)."""
    until = run.plan.steps if until is None else min(until, run.plan.steps)
    windows, make = _maker(run, "train")
    every = run.plan.eval_every or max(1, run.plan.steps // 10)
    source = batches.stream(len(windows), run.plan.seed, run.position)
    if not run.evals:
        run.evals.append(evaluate(run))
    while run.step < until and not (should_stop and should_stop()):
        tic = time.perf_counter()
        examples_ = batches.fill(source, make, run.plan.batch_tokens, max_examples=run.plan.batch_tokens)
        loss = _step(run, examples_, on_progress, should_stop, tic)
        if loss is None:  # stopped inside the step: nothing of it was applied, Resume redoes it
            break
        run.position += len(examples_)
        run.step += 1
        run.seconds += time.perf_counter() - tic
        run.losses.append((run.step, loss))
        latest = None
        if run.step % every == 0 or run.step == run.plan.steps:
            latest = evaluate(run)
            run.evals.append(latest)
        if on_progress:
            on_progress(Progress(run.step, run.plan.steps, run.losses[-1][1], run.tokens_seen, run.flops, run.seconds,
                                 latest))
    return run
