"""Early exit measured like every other compression method: FastBERT's speed S against the full model.

:func:`baseline` loads the exits a lab run trained (:mod:`explorer.training.exits`) and measures, once, the
model that always runs every layer and answers with its teacher; :func:`row` measures one speed ``exit-S``
beside it (:func:`explorer.compression.study.run` puts them together):

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
from typing import Any

import torch

from explorer.compression import measure, methods, quality
from explorer.compression.result import Baseline, ExitReference, Progress, Row, Settings, Study
from explorer.core.errors import ExplorerError, shorten
from explorer.core.limits import EARLY_EXIT_PASSAGE_CHARS
from explorer.core.notices import Notice
from explorer.runtime import placement
from explorer.runtime.resolve import resolve
from explorer.training import checkpoint, downstream, exits, sections

__all__ = ["DEFAULT_PASSAGE", "TIMED", "baseline", "row"]

TIMED = 32  # examples per timed call: one by one, as adaptive inference runs
DEFAULT_PASSAGE = ("Return a new sorted list from the items in iterable. The key argument specifies a function of one "
                   "argument that is used to extract a comparison key from each element.")
SIZE_NOTE = Notice("info", "Early exit saves compute, not bytes: each layer gets a small classifier, so the model is a "
                           "little larger; the speed-up is in layers run (and latency), at the cost of accuracy.")


def _folder(key: str, models_dir: str | None) -> Path:
    found = resolve(key, models_dir)
    if found.path is None:
        raise ExplorerError(found.reason or f"{shorten(key)} is not available here.")
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


def _loaded(settings: Settings) -> tuple[exits.Exits, dict[str, Any], exits.ExitSpec]:
    """The lab model with its exits on the settings' device, its saved card, and the spec the exits were trained
    with."""
    model, meta = exits.load(_folder(settings.key, settings.models_dir), settings.device)
    fields = exits.ExitSpec.__dataclass_fields__
    return model, meta, exits.ExitSpec(**{k: v for k, v in (meta.get("spec") or {}).items() if k in fields})


def baseline(settings: Settings, progress: Progress | None = None) -> Baseline:
    """The full model measured once: every layer's answer on the held-out examples (what each speed is scored
    from), the teacher's accuracy, size and latency, and its answer to the passage."""
    report = progress or (lambda _f, _t: None)
    key, device = settings.key, settings.device
    report(0.0, f"Loading the exits of {key}…")
    model, meta, spec = _loaded(settings)
    test = exits.test_examples(spec)
    labels = torch.tensor([e.label for e in test])
    report(0.1, f"Every layer's answer on {len(test)} held-out examples…")
    probs = exits.probabilities(model, test)  # (L, N, classes)
    timed = tuple(downstream.tensors([e], torch.device(device))[:2] for e in test[:TIMED])
    passage, said = quality.prompt_used(settings.prompt, DEFAULT_PASSAGE, EARLY_EXIT_PASSAGE_CHARS)
    teacher_only = sum(measure.disk_bytes(m) for m in (model.encoder, model.classifiers[-1]))
    accuracy = exits.decide(probs, 0.0).accuracy(labels)
    timing = measure.time_call(partial(_full, model, timed), len(timed), device, repeats=settings.repeats)
    row = Row("original", f"every layer, the teacher answers ({model.layers} layers)", teacher_only,
              measure.memory_bytes(model.encoder) + measure.memory_bytes(model.classifiers[-1]),
              timing.latency_ms, timing.throughput, timing.latency_ms,
              quality.Quality(_metric(), accuracy, accuracy,
                              {"mean_layers": float(model.layers), "layer_speedup": 1.0}),
              0.0, _answer(model, passage, 0.0, spec.seq_len, device))
    task = Notice("info", f"The exits were trained on \"{sections.TASK}\" ({meta.get('n_train', '?')} windows of the "
                          f"bundled corpus's training documents) and are scored on {len(test)} windows of its held-out "
                          "documents. Latency: one example at a time, as adaptive inference runs.")
    study = Study(key, f"{key} with FastBERT exits", False, device, placement.device_name(device), "float32",
                  "examples/s", passage, row, (), (*said, task, SIZE_NOTE))
    return Baseline(settings, study, ExitReference(probs, labels, timed, spec.seq_len))


def _metric() -> str:
    return f"accuracy on \"{sections.TASK}\""


def row(base: Baseline, method: methods.Method) -> Row:
    """One ``exit-S`` speed against ``base``: its accuracy from every layer's answers, adaptive inference timed
    alternately with the full model, and its answer to the passage."""
    ref = base.reference
    if not isinstance(ref, ExitReference):
        raise ExplorerError(f"{method.name} measures a lab model's trained exits, not a compressed copy: run it apart "
                            "from the other methods (one study with only exit-S methods).")
    model, _meta, _spec = _loaded(base.settings)
    decision = exits.decide(ref.probs, method.speed)
    items, device = list(ref.timed), base.study.device
    full, timing = measure.time_pair(partial(_full, model, items), partial(_early, model, items, method.speed),
                                     len(items), device, repeats=base.settings.repeats)
    original = base.study.baseline.quality.value
    q = quality.Quality(_metric(), decision.accuracy(ref.labels), original,
                        {"mean_layers": decision.mean_layers, "layer_speedup": model.layers / decision.mean_layers})
    return Row(method.name, methods.PATTERNS["exit"], measure.disk_bytes(model), measure.memory_bytes(model),
               timing.latency_ms, timing.throughput, full.latency_ms, q, 0.0,
               _answer(model, base.study.prompt, method.speed, ref.seq_len, device))
