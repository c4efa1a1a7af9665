"""The tasks bundled in ``assets/evaluation/`` (written for this project), one per kind, so pages open on results.

>>> sorted(TASKS)
['cloze', 'multiple_choice', 'perplexity', 'sentences']
>>> task("multiple_choice").source
'written here (assets/evaluation/multiple_choice.jsonl)'
"""

from __future__ import annotations

from pathlib import Path

from explorer.core.errors import ExplorerError
from explorer.evaluation import taskfile
from explorer.evaluation.task import Task

__all__ = ["DIRECTORY", "TASKS", "lines", "path", "task", "text"]

DIRECTORY = Path(__file__).resolve().parents[2] / "assets" / "evaluation"
# name -> (file, what it is, in words)
TASKS: dict[str, tuple[str, str]] = {
    "multiple_choice": ("multiple_choice.jsonl", "26 general-knowledge questions, 4 choices each (multiple choice)"),
    "cloze": ("cloze.jsonl", "22 phrases to complete (cloze: exact next words)"),
    "perplexity": ("perplexity.txt", "three paragraphs of prose (rolling perplexity)"),
    "sentences": ("sentences.txt", "30 sentences on five topics, one a line (the projector's points)"),
}


def path(name: str) -> Path:
    """The bundled file of ``name`` (a key of :data:`TASKS`)."""
    if name not in TASKS:
        raise ExplorerError(f"No bundled task {name!r}: pick one of {', '.join(TASKS)}.")
    return DIRECTORY / TASKS[name][0]


def task(name: str) -> Task:
    """A bundled multiple-choice or cloze task, with its source."""
    file = path(name)
    got = taskfile.parse_task(file.read_bytes(), file.name)
    return Task(name, got.kind, got.examples, f"written here (assets/evaluation/{file.name})", got.notices)


def text(name: str = "perplexity") -> str:
    """A bundled perplexity text."""
    file = path(name)
    return taskfile.parse_text(file.read_bytes(), file.name)


def lines(name: str = "sentences") -> list[str]:
    """A bundled file of texts, one a line (the projector's points)."""
    file = path(name)
    return taskfile.parse_lines(file.read_bytes(), file.name)
