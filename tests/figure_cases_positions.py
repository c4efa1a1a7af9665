"""Figure cases of the Positions page (tests/figure_cases.py imports this): formulas and tiny random tables, no
model loaded except where a view needs one (a variant without weights is drawn from its formula)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from explorer.architecture import catalog, kvcache
from explorer.architecture.positions import tables
from explorer.architecture.positions.scheme import by_distance, scheme_of
from explorer.plots import positions
from tests.figure_cases import CASES


@lru_cache(maxsize=4)
def _scheme(key: str):
    return scheme_of(catalog.variant_config(key), key)


@lru_cache(maxsize=1)
def _view():
    from explorer.tasks.positions import view

    return view("t5-small", "The cat sat on the mat.")


def _table() -> np.ndarray:
    rows = np.arange(64)[:, None] * np.linspace(0.01, 0.3, 16)[None, :]
    return np.sin(rows)


def _curves():
    return [kvcache.curve(catalog.variant_config(k), "bfloat16", k) for k in ("gemma3-270m", "gpt2", "t5-small")]


CASES["positions.pair_matrix"] = lambda: positions.pair_matrix(_view(), "t5-small")
CASES["positions.table_similarity"] = lambda: positions.table_similarity(_table(), tables.random_table(64, 16),
                                                                         "all-MiniLM-L6-v2")
CASES["positions.table_similarity:alone"] = lambda: positions.table_similarity(_table(), None, "m2m100")
CASES["positions.table_components"] = lambda: positions.table_components(_table(), "all-MiniLM-L6-v2")
CASES["positions.by_distance"] = lambda: positions.by_distance(by_distance(_scheme("gemma3-270m"), 64),
                                                               "gemma3-270m", "score of equal vectors")
CASES["positions.by_distance:buckets"] = lambda: positions.by_distance(by_distance(_scheme("t5-small"), 300),
                                                                       "t5-small", "bucket")
CASES["positions.t5_bias"] = lambda: positions.t5_bias(np.random.default_rng(0).normal(size=(8, 257)), "t5-small")
CASES["positions.rotary_frequencies"] = lambda: positions.rotary_frequencies(_scheme("gemma3-270m"))
CASES["positions.rotary_steps"] = lambda: positions.rotary_steps(_scheme("gpt-j"))
CASES["positions.alibi_reference"] = lambda: positions.alibi_reference()
CASES["positions.cache_curves"] = lambda: positions.cache_curves(_curves(), {"gemma3-270m": 536_196_352,
                                                                            "gpt2": 248_879_616})
CASES["positions.cache_layers"] = lambda: positions.cache_layers(kvcache.plan(catalog.variant_config("gemma3-270m"),
                                                                              4096, "bfloat16", "gemma3-270m"))
