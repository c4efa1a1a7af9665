"""Pretraining budgets: what each variant cost to train, as its paper (or model card) says.

The data live in ``assets/budgets.json``, one record per catalog key, each with its ``source`` and a
``checked`` line saying where the figures were read. Nothing is filled in: a field the source does not
give stays ``None``. Two numbers are derived here, and say so:

- ``tokens``: when the source gives no token count, tokens = steps x batch_tokens when it gives the
  tokens per step itself (BERT's "128,000 tokens/batch"), else steps x batch x seq_len
  (``tokens_source`` names the product; an upper bound when sequences were packed or drawn shorter).
- ``train_flops``: when the source reports none, the usual estimate C = 6·N·D (Kaplan et al. 2020,
  Sec. 2.1: about 2N FLOPs per token forward, twice that backward), with N = the catalog's published
  parameter count and D = tokens; ``train_flops_source`` starts with "estimated". A model whose layers share
  one set of weights (ALBERT) runs each shared weight once per layer per token, so 6·N·D with its published
  N is a lower bound there, and the source text says so with the factor.

What stops a derivation is named, not guessed: ``missing`` lists the record fields (and ``published_params``,
the catalog's count) that a token count or a FLOPs estimate would need.

A record describes the setup its source reports; when the catalog builds a checkpoint that was trained longer
(ALBERT's v2 checkpoints: 10M and 3M steps against the paper's 125K), ``checkpoint_steps`` says how long, and
:attr:`Budget.describes_checkpoint` is False: the scaling plots then leave the variant out rather than place its
checkpoint at the paper's budget.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from explorer import ASSETS
from explorer.architecture import catalog, modeltypes
from explorer.core.errors import ExplorerError

__all__ = ["BUDGETS_FILE", "NOT_RECORDED", "Budget", "budget", "budgets", "compare_columns", "keys", "load",
           "train_flops"]

BUDGETS_FILE = ASSETS / "budgets.json"
NOT_RECORDED = "not recorded"
FLOPS_PER_PARAM_TOKEN = 6  # Kaplan et al. 2020, Sec. 2.1: C ~ 6 N D for a forward and backward pass
FIELDS = ("corpus", "corpus_gb", "tokens", "steps", "batch", "seq_len", "batch_tokens", "hardware", "days",
          "train_flops")
# The ways to a token count, tried in this order: the source's own tokens per step, then sequences x length.
TOKEN_ROUTES = (("steps", "batch_tokens"), ("steps", "batch", "seq_len"))


@dataclass(frozen=True)
class Budget:
    """One variant's pretraining budget (``None`` = the source does not say)."""

    key: str
    corpus: str | None
    corpus_gb: float | None
    tokens: float | None
    tokens_source: str | None  # "reported" | "steps x batch_tokens" | "steps x batch x seq_len" | None
    steps: int | None
    batch: int | None  # sequences per step
    seq_len: int | None
    batch_tokens: float | None  # tokens per step, where the source counts its batch in tokens
    hardware: str | None
    days: float | None
    train_flops: float | None
    train_flops_source: str | None  # "reported: ..." | "estimated: 6 x N x D ..." | None
    source: str
    checked: str
    note: str
    missing: tuple[str, ...] = ()  # fields a token count or a FLOPs estimate lacks ("record": no record at all)
    checkpoint_steps: int | None = None  # steps of the checkpoint the catalog builds, where its source says they differ

    @property
    def describes_checkpoint(self) -> bool:
        """Whether these figures are those of the checkpoint the catalog builds (not a shorter setup of its paper)."""
        return self.checkpoint_steps is None or self.checkpoint_steps == self.steps

    @property
    def checkpoint_ratio(self) -> float | None:
        """How many times this record's steps the catalog's checkpoint was trained (None: the same, or unknown)."""
        if self.describes_checkpoint or not self.steps or self.checkpoint_steps is None:
            return None
        return self.checkpoint_steps / self.steps

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "missing": list(self.missing)}


def _derived_tokens(record: dict[str, Any]) -> tuple[float | None, str | None]:
    if record.get("tokens") is not None:
        return float(record["tokens"]), "reported"
    for route in TOKEN_ROUTES:
        values = [record.get(name) for name in route]
        if all(v is not None for v in values):
            return math.prod(float(v) for v in values if v is not None), " x ".join(route)
    return None, None


def _missing(key: str, record: dict[str, object], tokens: float | None, flops: float | None) -> tuple[str, ...]:
    """Fields whose absence blocks the tokens (of the route closest to complete; on a tie, steps x batch x
    seq_len, the one most sources give) and, with no reported FLOPs, the 6·N·D estimate's published N."""
    gaps: tuple[str, ...] = ()
    if tokens is None:
        routes = [tuple(name for name in route if record.get(name) is None) for route in reversed(TOKEN_ROUTES)]
        gaps = min(routes, key=len)
    if flops is None and catalog.get_variant(key).published_params is None:
        gaps += ("published_params",)
    return gaps


def _shared_layer_uses(key: str) -> int:
    """How many times a token passes through each set of weights: layers / groups for ALBERT-style sharing
    (``num_hidden_groups`` < layers), else 1."""
    config = catalog.variant_config(key)
    layers = modeltypes.num_layers(config)
    groups = modeltypes.config_int(config, "num_hidden_groups")
    return layers // groups if layers and groups and groups < layers else 1


def _derived_flops(key: str, record: dict[str, Any], tokens: float | None) -> tuple[float | None, str | None]:
    if record.get("train_flops") is not None:
        return float(record["train_flops"]), f"reported: {record['source']}"
    params = catalog.get_variant(key).published_params
    if tokens is None or params is None:
        return None, None
    text = f"estimated: 6 x N x D, N = {params:,} published parameters, D = {tokens:.3g} tokens"
    uses = _shared_layer_uses(key)
    if uses > 1:
        text += (f"; a lower bound: the layers share weights, so N counts each shared layer once though every "
                 f"token passes through it {uses} times")
    longer = record.get("checkpoint_steps")
    if longer and record.get("steps") and longer != record["steps"]:
        text += (f"; of the paper's {record['steps']:,}-step setup: the catalog's checkpoint was trained "
                 f"{longer / record['steps']:.0f}x as many steps ({longer:,})")
    return FLOPS_PER_PARAM_TOKEN * params * tokens, text


def _budget(record: dict[str, Any]) -> Budget:
    key = record["key"]
    catalog.get_variant(key)  # a key the catalog lost is a data error, said by the catalog's own message
    tokens, tokens_source = _derived_tokens(record)
    flops, flops_source = _derived_flops(key, record, tokens)
    return Budget(key, record.get("corpus"), record.get("corpus_gb"), tokens, tokens_source, record.get("steps"),
                  record.get("batch"), record.get("seq_len"), record.get("batch_tokens"), record.get("hardware"),
                  record.get("days"), flops, flops_source, record["source"], record["checked"],
                  record.get("note", ""), _missing(key, record, tokens, flops), record.get("checkpoint_steps"))


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
    return Budget(key, None, None, None, None, None, None, None, None, None, None, None, None, NOT_RECORDED, "",
                  "no source giving this variant's pretraining budget has been read yet", ("record",))


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


def compare_columns(key: str) -> dict[str, object]:
    """The two Compare-table columns: training FLOPs (a number or None) and where it comes from (text)."""
    b = budget(key)
    return {"train_flops": b.train_flops, "train_flops_source": b.train_flops_source or NOT_RECORDED}
