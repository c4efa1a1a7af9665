"""Side by side: the comparator table and the scaling curves for several variants."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from explorer.architecture import budgets, catalog, census
from explorer.architecture.modeltypes import is_encoder_decoder, num_heads, num_layers
from explorer.core import persist
from explorer.core.errors import ExplorerError

if TYPE_CHECKING:  # torch and transformers load only when an entry must be computed
    from transformers import PretrainedConfig

    from explorer.architecture import analysis

__all__ = ["LENGTHS", "MAX_COMPARE", "config_summary", "Comparison", "row", "compare"]


LENGTHS = (512, 1024, 2048, 4096, 8192, 16384)
MAX_COMPARE = 12  # the page's limit: beyond this its charts stop being readable (the CLI takes any number)


def _first(config: PretrainedConfig, *names: str) -> int | None:
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    return None


def config_summary(config: PretrainedConfig) -> dict[str, object]:
    """Layers, hidden size, heads, FFN size, vocabulary, positions of any config.

    One type per column (a table of several variants must convert to Arrow: "6+6" beside 12 did not):
    ``layers`` is the encoder's (or the only) stack, ``decoder_layers`` the decoder's of an
    encoder-decoder, None otherwise.
    """
    if config.model_type == "encoder-decoder":  # composite (BERT2BERT): the encoder's widths, the decoder's depth
        return {**config_summary(config.encoder), "decoder_layers": num_layers(config, "decoder")}
    return {
        "layers": num_layers(config),
        "decoder_layers": num_layers(config, "decoder") if is_encoder_decoder(config) else None,
        "hidden": _first(config, "hidden_size"),
        "heads": num_heads(config),
        "ffn": _first(config, "intermediate_size", "n_inner", "d_ff", "dff", "hidden_dim", "encoder_ffn_dim")
        or 4 * (_first(config, "hidden_size") or 0),
        "vocab": _first(config, "vocab_size"),
        "embedding": _first(config, "embedding_size") or _first(config, "hidden_size"),
        "max_positions": _first(config, "max_position_embeddings", "n_positions", "n_ctx"),
    }


@dataclass(frozen=True)
class Comparison:
    """Rows of the table, per-model component breakdowns, and cost against sequence length."""

    rows: tuple[dict[str, Any], ...]
    components: dict[str, dict[str, int]]  # model name -> category -> params
    lengths: tuple[int, ...]
    flops: dict[str, tuple[int, ...]]  # model name -> per-token FLOPs at each length
    attention_memory: dict[str, tuple[int, ...]]  # model name -> fp32 score bytes per sequence

    def to_dict(self) -> dict[str, object]:
        return {"rows": list(self.rows), "components": self.components, "lengths": list(self.lengths),
                "flops": {k: list(v) for k, v in self.flops.items()},
                "attention_memory": {k: list(v) for k, v in self.attention_memory.items()}}


def row(result: analysis.Analysis, variant: catalog.Variant, config: PretrainedConfig) -> dict[str, object]:
    """One comparator row."""
    return {
        "key": variant.key, "name": variant.name, "family": variant.family, "year": variant.year,
        **config_summary(config),
        "params": result.base_params, "params_with_heads": result.params,
        "fp32_bytes": result.memory["fp32"], "fp16_bytes": result.memory["fp16"],
        "int8_bytes": result.memory["int8"], "flops_per_token": result.flops.total,
        "objectives": ", ".join(variant.objectives), "attention": variant.attention,
        "positions": variant.positions,
    }


# Code an entry depends on: a change to any of these modules recomputes the stored entries.
CODE = ("explorer.architecture.compare", "explorer.architecture.analysis", "explorer.architecture.layertree",
        "explorer.architecture.components", "explorer.architecture.weightbytes", "explorer.architecture.shapes",
        "explorer.architecture.cost", "explorer.architecture.build", "explorer.architecture.custom_models")
MAX_STORED = 2000  # stored (variant, length) entries; beyond this the store starts afresh


def _entry(key: str, seq_len: int, lengths: Sequence[int]) -> dict[str, Any]:
    """One variant's row, components and cost curves (builds it on meta: imports torch)."""
    from explorer.architecture import analysis, build, cost

    variant = catalog.get_variant(key)
    config = build.make_config(key)
    model = build.instantiate(config, variant.head, "meta", variant.extra)
    result = analysis.analyse_model(model, config, key=key, name=variant.name, head=variant.head,
                                    seq_len=seq_len, attention=variant.attention, shapes=False)
    mm = result.flops.matmul_flops
    return {"row": row(result, variant, config), "components": result.components,
            "flops": [mm + cost.model_attention_flops(model, config, n, variant.attention) for n in lengths],
            "memory": [cost.attention_memory(config, n, variant.attention) for n in lengths]}


def _stored_entry(stored: dict[str, Any], key: str, seq_len: int, lengths: Sequence[int]) -> dict[str, Any]:
    """``_entry`` from the on-disk store when its inputs are unchanged, else computed and stored.

    A warm ``python -m explorer compare`` then needs neither torch nor transformers.
    """
    variant = catalog.get_variant(key)
    fp = persist.fingerprint(catalog.config_text(key), variant.head, variant.extra, seq_len, list(lengths),
                             census.code_source(CODE), census.versions())
    slot = f"{key}@{seq_len}"
    if stored.get(slot, {}).get("fingerprint") != fp:
        stored[slot] = {"fingerprint": fp, **_entry(key, seq_len, lengths)}
    return stored[slot]


def compare(keys: Sequence[str], seq_len: int = 512, lengths: Sequence[int] = LENGTHS) -> Comparison:
    """Analyse each variant and tabulate them side by side (results kept in the on-disk cache).

    >>> result = compare(["bert-base", "gpt2"], seq_len=128)
    >>> [r["key"] for r in result.rows], result.rows[0]["params"]
    (['bert-base', 'gpt2'], 109482240)
    """
    if not keys:
        raise ExplorerError("Pick at least one variant to compare.")
    stored = persist.load("compare")
    stored = {} if len(stored) > MAX_STORED else stored
    rows, comps, flops, mem = [], {}, {}, {}
    for key in dict.fromkeys(keys):  # keep order, drop duplicates
        entry = _stored_entry(stored, key, seq_len, lengths)
        name = entry["row"]["name"]
        rows.append({**entry["row"], **budgets.compare_columns(key)})  # the paper's budget: not cached, not computed
        comps[name] = entry["components"]
        flops[name], mem[name] = tuple(entry["flops"]), tuple(entry["memory"])
    persist.save("compare", stored)
    return Comparison(tuple(rows), comps, tuple(lengths), flops, mem)
