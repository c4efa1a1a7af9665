"""GLUE across papers: one row per (model, paper, setting), one column per task, with what differs.

The published results (:mod:`explorer.papers.results`) come one paper at a time. Here every row that reports a
GLUE task on a dev or test set is lined up under the same task columns. The numbers are the papers' own;
what is *not* comparable is said, row by row (split, single model or ensemble, which metric a task uses)
and in :data:`NOTES`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from explorer.core.errors import ExplorerError
from explorer.papers import results

__all__ = ["NOTES", "SPLITS", "TASKS", "glue_view", "split_of"]

TASKS = ("GLUE score", "CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI-m", "QNLI", "RTE")
SPLITS = ("dev", "test")
# Metric names of the tables -> (task column, how the metric is named when it is not the task's only one).
# Order matters: within one row the first metric found for a task is the one shown (F1 before accuracy for
# MRPC and QQP, Spearman before Pearson for STS-B: the GLUE leaderboard's conventions).
METRICS: dict[str, tuple[str, str]] = {
    "glue_score": ("GLUE score", ""), "score": ("GLUE score", ""), "average": ("GLUE score", ""),
    "avg": ("GLUE score", ""), "macro_score": ("GLUE score", "macro average with WNLI"),
    "average_without_wnli": ("GLUE score", "average without WNLI"),
    "macro_score_without_wnli": ("GLUE score", "macro average without WNLI"),
    "cola": ("CoLA", ""), "sst2": ("SST-2", ""),
    "mrpc_f1": ("MRPC", "F1"), "mrpc_accuracy": ("MRPC", "accuracy"), "mrpc": ("MRPC", "metric not named"),
    "stsb_spearman": ("STS-B", "Spearman"), "stsb_pearson": ("STS-B", "Pearson"), "stsb": ("STS-B", "metric not named"),
    "qqp_f1": ("QQP", "F1"), "qqp_accuracy": ("QQP", "accuracy"), "qqp": ("QQP", "metric not named"),
    "mnli_matched": ("MNLI-m", ""), "mnli_m": ("MNLI-m", ""), "mnli": ("MNLI-m", ""),
    "qnli": ("QNLI", ""), "rte": ("RTE", ""),
}
NOTES = (
    "**Dev and test are different sets.** Dev scores are chosen by the authors (often the median or best of "
    "several fine-tuning runs); test scores come from the GLUE server, one submission. Compare within a split.",
    "**Single models and ensembles** sit in the same leaderboards; the *setting* column says which. An ensemble "
    "is several fine-tuned models voting, not a bigger architecture.",
    "**The task sets differ.** The GLUE score is each paper's own average: with or without WNLI, over 8 or 9 "
    "tasks; some tables (ALBERT, the RoBERTa ablation) report only MNLI and SST-2. A blank is *not reported*.",
    "**Metrics differ per task.** MRPC and QQP are F1 in some tables and accuracy in others (about 18 points "
    "apart on QQP); STS-B is Spearman or Pearson. The *metrics* column names every non-default choice.",
    "**Training budgets differ.** Rows from the same paper share a recipe; across papers, data, steps and "
    "fine-tuning search differ (see the budgets on this page and `python -m explorer budget`).",
)


def split_of(benchmark: str) -> str | None:
    """``dev`` / ``test`` from a benchmark name (``glue-dev``), None when it names no split."""
    tail = benchmark.rsplit("-", 1)[-1]
    return tail if tail in SPLITS else None


def _glue_metrics(row: results.Row) -> tuple[str, str] | None:
    """(task, metric note) when this row scores a GLUE task; the GLUE score only from GLUE tables."""
    found = METRICS.get(row.metric)
    if found is None or (found[0] == "GLUE score" and not row.benchmark.startswith("glue")):
        return None
    return found


def _setting(model: str) -> str:
    lowered = model.lower()
    return "ensemble" if "ensemble" in lowered else "human" if "human" in lowered else "single model"


def _record(model: str, variant: str | None, split: str, source: str) -> dict[str, object]:
    paper = source.split(",", 1)[0]  # "Devlin et al. 2019 (BERT), Table 1" -> the paper
    return {"model": model, "paper": paper, "catalog": variant or "", "split": split, "setting": _setting(model),
            **dict.fromkeys(TASKS), "metrics": "", "tasks_reported": 0, "source": source}


def _fill(record: dict[str, object], chosen: dict[str, tuple[str, float]]) -> dict[str, object]:
    notes = []
    for task, (note, value) in chosen.items():
        record[task] = value
        if note:
            notes.append(f"{task}: {note}")
    record["metrics"] = "; ".join(notes)
    record["tasks_reported"] = sum(1 for t in TASKS[1:] if record[t] is not None)
    return record


def _records(rows: Iterable[results.Row]) -> list[dict[str, Any]]:
    grouped: dict[tuple[str, str, str], list[results.Row]] = {}
    for r in rows:
        split = split_of(r.benchmark)
        if split and r.value is not None and _glue_metrics(r):
            grouped.setdefault((r.model, r.source, split), []).append(r)
    out = []
    for (model, source, split), group in grouped.items():
        chosen: dict[str, tuple[str, float]] = {}
        for r in sorted(group, key=lambda r: list(METRICS).index(r.metric)):
            task, note = METRICS[r.metric]
            assert r.value is not None  # grouped above only with a value
            chosen.setdefault(task, (note, r.value))
        out.append(_fill(_record(model, group[0].variant, split, source), chosen))
    return out


def glue_view(split: str | None = None, rows: Sequence[results.Row] | None = None) -> list[dict[str, Any]]:
    """Every GLUE-task row of every paper (or of one split), test before dev, then by GLUE score.

    >>> any(r["model"] == "BERT-large" and r["split"] == "test" for r in glue_view())
    True
    """
    if split is not None and split not in SPLITS:
        raise ExplorerError(f"Unknown split {split[:80]!r}: choose one of {', '.join(SPLITS)}.")
    records = _records(results.load_rows() if rows is None else rows)
    if split is not None:
        records = [r for r in records if r["split"] == split]
    return sorted(records, key=lambda r: (r["split"] != "test", -(r["GLUE score"] or 0), -r["tasks_reported"]))
