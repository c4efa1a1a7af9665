"""A task: examples read from a file, in lm-evaluation-harness's shapes.

Two kinds of examples (one kind per task):

* **multiple choice** (``{"context", "choices", "answer"}``): each choice is scored as a continuation of the
  context after one space (lm-eval's default ``target_delimiter``); the choice with the highest summed
  log-likelihood wins (``acc``), or the highest per character of the choice (``acc_norm``, lm-eval's length
  normalisation);
* **cloze** (``{"context", "continuation"}``): the continuation is scored verbatim (lm-eval's ``loglikelihood``
  output: write its leading space in the file); right when greedy decoding gives it token by token.

Every other field of a line whose value is a string, a number or a boolean is kept (:attr:`Example.fields`): pages
slice the results by it and colour the projector's points by it.

>>> ex = Example(0, 1, "The sky is", ("blue", "green"), 0, (("topic", "colour"),))
>>> ex.continuations(), ex.field("topic"), ex.field("nope")
((' blue', ' green'), 'colour', None)
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.notices import Notice

__all__ = ["CHOICE", "CLOZE", "DELIMITER", "KINDS", "Example", "Task"]

CHOICE, CLOZE = "choice", "cloze"
KINDS = {CHOICE: "multiple choice", CLOZE: "cloze (exact next words)"}
DELIMITER = " "  # lm-eval's default target_delimiter, between a context and each of its choices

Scalar = str | int | float | bool


@dataclass(frozen=True)
class Example:
    """One line of a task file (``line``: its number in the file, 1-based; ``index``: 0-based among examples)."""

    index: int
    line: int
    context: str
    choices: tuple[str, ...]  # multiple choice: the options; cloze: the one continuation
    answer: int  # index of the right choice (cloze: 0)
    fields: tuple[tuple[str, Scalar], ...] = ()  # the line's other scalar fields, in file order
    kind: str = CHOICE

    def continuations(self) -> tuple[str, ...]:
        """The texts scored after the context: the choices after lm-eval's delimiter, or the cloze text as is."""
        if self.kind == CLOZE:
            return self.choices
        return tuple(DELIMITER + c for c in self.choices)

    def field(self, name: str) -> Scalar | None:
        """The value of the line's field ``name``, or None when it has none."""
        return dict(self.fields).get(name)


@dataclass(frozen=True)
class Task:
    """Examples of one kind, where they came from, and what was noticed while reading them."""

    name: str
    kind: str  # CHOICE or CLOZE
    examples: tuple[Example, ...]
    source: str  # "written here" for the bundled tasks, the file's name for others
    notices: tuple[Notice, ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:
        """Names of the extra fields, in order of first appearance (what results can be sliced by)."""
        seen: dict[str, None] = {}
        for ex in self.examples:
            seen.update((name, None) for name, _ in ex.fields)
        return tuple(seen)

    @property
    def pairs(self) -> int:
        """(context, continuation) pairs a model scores for the whole task."""
        return sum(len(ex.choices) for ex in self.examples)

    def head(self, n: int) -> Task:
        """The first ``n`` examples (a served model's page column scores a prefix; the CLI scores them all)."""
        return Task(self.name, self.kind, self.examples[:n], self.source, self.notices)
