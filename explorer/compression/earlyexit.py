"""Early exit measured like every other compression method: FastBERT's speed S against the full model.

``run("lab/mlm-tiny-300steps-seed0", [parse("exit-0.3")])`` loads the exits a lab run trained
(:mod:`explorer.training.exits`), and measures, beside the model that always runs every layer and
answers with its teacher:

- **quality**: accuracy on the held-out test set of the exits' task, with the mean number of layers
  run per example and the speed-up in layers (L / mean layers). Accuracy comes from every layer's
  distribution computed once (:func:`explorer.training.exits.decide`), which the tests check equals
  what adaptive inference answers example by example;
- **latency**: adaptive inference one example at a time (FastBERT's setting: each example leaves at
  its own layer), over :data:`TIMED` test examples, timed alternately with the full model;
- **size**: early exit does not shrink a model; it adds a small classifier per layer, and the table
  says so (size ratio a little above 1).

The result is an ordinary :class:`explorer.compression.study.Study`, so the page, the chart and the
CLI's JSON are the ones every other method uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path

import torch

from explorer.compression import measure, methods, quality
from explorer.compression.result import Progress, Row, Study
from explorer.core.errors import ExplorerError, shorten
from explorer.core.notices import Notice
from explorer.runtime import placement, weights
from explorer.training import checkpoint, exits, probe, sections

__all__ = ["DEFAULT_PASSAGE", "TIMED", "run"]

PASSAGE_CHARS = 2_000  # the page's box takes as much; the classifier reads its first seq_len tokens
TIMED = 32  # examples per timed call: one by one, as adaptive inference runs
DEFAULT_PASSAGE = ("Return a new sorted list from the items in iterable. The key argument specifies a function of one "
                   "argument that is used to extract a comparison key from each element.")
SIZE_NOTE = Notice("info", "Early exit saves compute, not bytes: each layer gets a small classifier, so the model is a "
                           "little larger; the speed-up is in layers run (and latency), at the cost of accuracy.")


def _folder(key: str, models_dir: str | None) -> Path:
    found = weights.locate(key, models_dir)
    if found.status != "ready" or not found.path:
        raise ExplorerError(found.message or f"{shorten(key)} is not available here.")
    if not checkpoint.has_exits(found.path):
        raise ExplorerError(f"{shorten(key)} has no early-exit classifiers. exit-S runs on a lab model whose FastBERT "
                            "exits were trained: tick \"FastBERT exits\" in the Pretraining lab and Save, or run "
                            "`python -m explorer pretrain mlm --exits`.")
    return Path(found.path)


def _full(model: exits.Exits, items: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> None:
    for ids, mask in items:
        model.teacher_logits(ids, mask)


def _early(model: exits.Exits, items: Sequence[tuple[torch.Tensor, torch.Tensor]], speed: float) -> None:
    for ids, mask in items:
        exits.adaptive(model, ids, mask, speed)


def _answer(model: exits.Exits, passage: str, speed: float, seq_len: int, device: str) -> str:
    ids, mask = exits.encode(passage, seq_len, device)
    label, layer, doubt = exits.adaptive(model, ids, mask, speed)
    return f"{sections.LABELS[label]} · answered after layer {layer} of {model.layers} (uncertainty {doubt:.2f})"


def run(key: str, parsed: Sequence[methods.Method], *, device: str, models_dir: str | None = None,
        prompt: str | None = None, repeats: int = measure.REPEATS, progress: Progress | None = None) -> Study:
    """The full model and one row per ``exit-S`` method, measured on ``device``."""
    report = progress or (lambda _f, _t: None)
    report(0.0, f"Loading the exits of {key}…")
    model, meta = exits.load(_folder(key, models_dir), device)
    spec = exits.ExitSpec(**{k: v for k, v in (meta.get("spec") or {}).items() if k in exits.ExitSpec.__dataclass_fields__})
    test = exits.test_examples(spec)
    labels = torch.tensor([e.label for e in test])
    report(0.1, f"Every layer's answer on {len(test)} held-out examples…")
    probs = exits.probabilities(model, test)
    where = torch.device(device)
    timed = [probe.tensors([e], where)[:2] for e in test[:TIMED]]
    passage, said = quality.prompt_used(prompt, DEFAULT_PASSAGE, PASSAGE_CHARS)
    teacher_only = sum(measure.disk_bytes(m) for m in (model.encoder, model.classifiers[-1]))
    metric = f"accuracy on \"{sections.TASK}\""
    full = exits.decide(probs, 0.0)
    base_timing = measure.time_call(partial(_full, model, timed), len(timed), device, repeats=repeats)
    base_quality = quality.Quality(metric, full.accuracy(labels), full.accuracy(labels),
                                   {"mean_layers": float(model.layers), "layer_speedup": 1.0})
    baseline = Row("original", f"every layer, the teacher answers ({model.layers} layers)", teacher_only,
                   measure.memory_bytes(model.encoder) + measure.memory_bytes(model.classifiers[-1]),
                   base_timing.latency_ms, base_timing.throughput, base_timing.latency_ms, base_quality, 0.0,
                   _answer(model, passage, 0.0, spec.seq_len, device))
    rows = []
    for i, m in enumerate(parsed):
        report(0.2 + 0.8 * i / len(parsed), f"{m.name}: adaptive inference, timed beside the full model…")
        decision = exits.decide(probs, m.speed)
        base, timing = measure.time_pair(partial(_full, model, timed), partial(_early, model, timed, m.speed),
                                         len(timed), device, repeats=repeats)
        q = quality.Quality(metric, decision.accuracy(labels), full.accuracy(labels),
                            {"mean_layers": decision.mean_layers, "layer_speedup": model.layers / decision.mean_layers})
        rows.append(Row(m.name, methods.PATTERNS["exit"], measure.disk_bytes(model), measure.memory_bytes(model),
                        timing.latency_ms, timing.throughput, base.latency_ms, q, 0.0,
                        _answer(model, passage, m.speed, spec.seq_len, device)))
    report(1.0, "Done.")
    task = Notice("info", f"The exits were trained on \"{sections.TASK}\" ({meta.get('n_train', '?')} windows of the "
                          f"bundled corpus's training documents) and are scored on {len(test)} windows of its held-out "
                          "documents. Latency: one example at a time, as adaptive inference runs.")
    return Study(key, f"{key} with FastBERT exits", False, device, placement.device_name(device), "float32",
                 "examples/s", passage, baseline, tuple(rows), (*said, task, SIZE_NOTE))
