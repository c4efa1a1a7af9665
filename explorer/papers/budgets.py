"""Pretraining budgets: what each variant cost to train, as its paper (or model card) says.

The data live in ``assets/budgets.json``, one record per catalog key, each with its ``source`` and a
``checked`` line saying where the figures were read. Nothing is filled in: a field the source does not
give stays ``None``. Two numbers are derived here, and say so:

- ``tokens``: when the source gives steps, batch and sequence length but no token count, tokens =
  steps x batch x seq_len (``tokens_source`` = "steps x batch x seq_len", an upper bound when
  sequences were packed shorter).
- ``train_flops``: when the source reports none, the usual estimate C = 6·N·D (Kaplan et al. 2020,
  Sec. 2.1: about 2N FLOPs per token forward, twice that backward), with N = the catalog's published
  parameter count and D = tokens; ``train_flops_source`` starts with "estimated".
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from explorer import ASSETS
from explorer.architecture import catalog
from explorer.core.errors import ExplorerError

__all__ = ["BUDGETS_FILE", "NOT_RECORDED", "Budget", "budget", "budgets", "compare_columns", "keys", "load",
           "train_flops"]

BUDGETS_FILE = ASSETS / "budgets.json"
NOT_RECORDED = "not recorded"
FLOPS_PER_PARAM_TOKEN = 6  # Kaplan et al. 2020, Sec. 2.1: C ~ 6 N D for a forward and backward pass
FIELDS = ("corpus", "corpus_gb", "tokens", "steps", "batch", "seq_len", "hardware", "days", "train_flops")


@dataclass(frozen=True)
class Budget:
    """One variant's pretraining budget (``None`` = the source does not say)."""

    key: str
    corpus: str | None
    corpus_gb: float | None
    tokens: float | None
    tokens_source: str | None  # "reported" | "steps x batch x seq_len" | None
    steps: int | None
    batch: int | None
    seq_len: int | None
    hardware: str | None
    days: float | None
    train_flops: float | None
    train_flops_source: str | None  # "reported: ..." | "estimated: 6 x N x D ..." | None
    source: str
    checked: str
    note: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _derived_tokens(record: dict[str, Any]) -> tuple[float | None, str | None]:
    if record.get("tokens") is not None:
        return float(record["tokens"]), "reported"
    steps, batch, seq_len = (record.get(name) for name in ("steps", "batch", "seq_len"))
    if steps is not None and batch is not None and seq_len is not None:
        return float(steps * batch * seq_len), "steps x batch x seq_len"
    return None, None


def _derived_flops(key: str, record: dict[str, Any], tokens: float | None) -> tuple[float | None, str | None]:
    if record.get("train_flops") is not None:
        return float(record["train_flops"]), f"reported: {record['source']}"
    params = catalog.get_variant(key).published_params
    if tokens is None or params is None:
        return None, None
    return (FLOPS_PER_PARAM_TOKEN * params * tokens,
            f"estimated: 6 x N x D, N = {params:,} published parameters, D = {tokens:.3g} tokens")


def _budget(record: dict[str, Any]) -> Budget:
    key = record["key"]
    catalog.get_variant(key)  # a key the catalog lost is a data error, said by the catalog's own message
    tokens, tokens_source = _derived_tokens(record)
    flops, flops_source = _derived_flops(key, record, tokens)
    return Budget(key, record.get("corpus"), record.get("corpus_gb"), tokens, tokens_source, record.get("steps"),
                  record.get("batch"), record.get("seq_len"), record.get("hardware"), record.get("days"), flops,
                  flops_source, record["source"], record["checked"], record.get("note", ""))


@lru_cache(maxsize=1)
def load() -> dict[str, Budget]:
    """Every recorded budget, by catalog key, in file order."""
    try:
        records = json.loads(BUDGETS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ExplorerError(f"Cannot read {BUDGETS_FILE.name}: {err}. Restore assets/budgets.json from git.") from err
    return {r["key"]: _budget(r) for r in records}


def keys() -> list[str]:
    """Catalog keys with a recorded budget."""
    return list(load())


def _empty(key: str) -> Budget:
    return Budget(key, None, None, None, None, None, None, None, None, None, None, None, NOT_RECORDED, "",
                  "no source giving this variant's pretraining budget has been read yet")


def budget(key: str) -> Budget:
    """The budget of one catalog key; a key without a record gets an all-``None`` budget saying so."""
    catalog.get_variant(key)  # unknown keys: the catalog's message, with close matches
    return load().get(key) or _empty(key)


def budgets(selected: Iterable[str] | None = None) -> list[Budget]:
    """Budgets of the given keys (all recorded ones when none are given)."""
    chosen = list(dict.fromkeys(selected or [])) or keys()
    return [budget(k) for k in chosen]


def train_flops(key: str) -> float | None:
    """Training FLOPs (reported, else the 6·N·D estimate), or None when neither is possible."""
    return budget(key).train_flops


def compare_columns(key: str) -> dict[str, Any]:
    """The two Compare-table columns: training FLOPs (a number or None) and where it comes from (text)."""
    b = budget(key)
    return {"train_flops": b.train_flops, "train_flops_source": b.train_flops_source or NOT_RECORDED}
