"""nnsight traces on an engine: read every layer's value at a site, or replace it in chosen rows of a batch.

A *site* is where in a layer a value is read or replaced (paths from :mod:`explorer.internals.sites`):

- ``resid``: the residual stream after the block (the block's output), ``(B, T, d_model)``;
- ``attn`` / ``mlp``: the attention / MLP sublayer's output before the residual add, ``(B, T, d_model)``;
- ``heads``: the attention output projection's input, head h = columns ``h*w:(h+1)*w``, ``(B, T, heads*w)``;
- ``neurons``: the MLP down projection's input, neuron n = column n, ``(B, T, d_ff)``;
- ``layer``: the block's contribution to the stream (its output minus its input), ``(B, T, d_model)``.

A *cell* is ``(layer, column)``: the column is a position (resid, attn, mlp), a head, a neuron, or None (every
position). One batched forward carries many copies of one input; row ``r`` gets cell ``cells[r]`` replaced by
``replacement[layer]`` (``(T, X)``: the clean run's value, zeros or a mean), so a whole grid costs a few forwards.
The bodies below read envoys in the order the model runs them, as nnsight requires.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import nnsight
import torch

from explorer.internals import sites
from explorer.interventions.engine import Engine
from explorer.interventions.prompts import Prompt
from explorer.runtime.offload import input_device
from explorer.tasks.generation.nexttoken import takes_logits_to_keep

if TYPE_CHECKING:
    from nnsight.intervention.tracer import InterleavingTracer

__all__ = ["SITES", "SITE_LABELS", "Cell", "batch_inputs", "capture", "occurrence", "readout_index", "replaced",
           "site_path"]

SITES = ("resid", "attn", "mlp", "heads", "neurons", "layer")
SITE_LABELS = {"resid": "residual stream", "attn": "attention output", "mlp": "MLP output",
               "heads": "attention heads", "neurons": "MLP neurons", "layer": "whole layer"}
Cell = tuple[int, int | None]  # (layer, column): a position, a head, a neuron, or None for every position


def site_path(s: sites.Sites, site: str, layer: int) -> str:
    """The module whose output (or, for heads and neurons, input) is ``site`` at ``layer``."""
    return {"resid": s.block, "layer": s.block, "attn": s.attn, "mlp": s.mlp, "heads": s.heads_in,
            "neurons": s.neurons_in}[site](layer)


def batch_inputs(engine: Engine, prompt: Prompt, rows: int) -> dict[str, object]:
    """``model(**inputs)`` for ``rows`` copies of ``prompt`` (``(rows, T)`` ids), on the model's input device."""
    device = input_device(engine.model)
    ids = torch.tensor([prompt.ids], device=device).expand(rows, -1)
    out: dict[str, object] = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "use_cache": False}
    if prompt.decoder_ids is not None:
        out["decoder_input_ids"] = torch.tensor([prompt.decoder_ids], device=device).expand(rows, -1)
    elif takes_logits_to_keep(engine.model) and prompt.readout == len(prompt.ids) - 1:
        out["logits_to_keep"] = 1  # a decoder's answer is its last position: its 262k-wide head runs there only
    return out


def readout_index(prompt: Prompt, inputs: Mapping[str, object]) -> int:
    """Where, in the output's logits, ``prompt``'s answer is read."""
    return -1 if "logits_to_keep" in inputs else prompt.readout


def occurrence(tracer: InterleavingTracer, s: sites.Sites, layer: int) -> Iterable[object]:
    """Where in the run ``layer``'s modules are read: a stack of distinct blocks has one call of each (iterate
    once); a shared block (ALBERT) is called once per layer, and nnsight binds reads to its ``layer``-th call."""
    return tracer.iter[layer] if s.shared else (None,)


def _live(engine: Engine, s: sites.Sites, site: str, layer: int) -> torch.Tensor:
    """The value at ``site`` of ``layer`` in the running forward (inside a trace only), (B, T, X)."""
    envoy = engine.at(site_path(s, site, layer))
    return sites.first(envoy.input if site in ("heads", "neurons") else envoy.output)


def capture(engine: Engine, s: sites.Sites, site: str, inputs: Mapping[str, object], readout: int,
            ) -> tuple[list[torch.Tensor], torch.Tensor]:
    """One forward of one input: every layer's value at ``site`` [(T, X)] * layers, and the answer's logits (V,)."""
    acts: list[torch.Tensor] = []
    with engine.envoy.trace(**inputs) as tracer:
        for layer in range(s.layers):
            for _ in occurrence(tracer, s, layer):
                if site == "layer":
                    entering = sites.first(engine.at(s.block(layer)).input)[0].clone()
                    acts.append(_live(engine, s, "resid", layer)[0] - entering)
                else:
                    acts.append(_live(engine, s, site, layer)[0].clone())
        logits = nnsight.save(engine.envoy.output.logits[0, readout].clone())
    return acts, logits


def _by_layer(cells: Sequence[Cell]) -> dict[int, list[tuple[int, int | None]]]:
    groups: dict[int, list[tuple[int, int | None]]] = defaultdict(list)
    for row, (layer, column) in enumerate(cells):
        groups[layer].append((row, column))
    return dict(sorted(groups.items()))


def _write(x: torch.Tensor, rows: list[tuple[int, int | None]], value: torch.Tensor, site: str, width: int) -> None:
    """Replace, in place, each row's cell of ``x`` (B, T, X) by ``value`` (T, X)."""
    value = value.to(device=x.device, dtype=x.dtype)
    for row, column in rows:
        if column is None:
            x[row] = value
        elif site == "heads":
            x[row, :, column * width:(column + 1) * width] = value[:, column * width:(column + 1) * width]
        elif site == "neurons":
            x[row, :, column] = value[:, column]
        else:
            x[row, column] = value[column]


def replaced(engine: Engine, s: sites.Sites, site: str, inputs: Mapping[str, object], readout: int,
             cells: Sequence[Cell], replacement: Mapping[int, torch.Tensor]) -> torch.Tensor:
    """One batched forward, row ``r`` with cell ``cells[r]`` replaced by ``replacement[layer]``: the answer's logits
    of every row (B, V), in float32 on the CPU. The inputs hold ``len(cells)`` rows."""
    groups = _by_layer(cells)
    with engine.envoy.trace(**inputs) as tracer:
        for layer, rows in groups.items():
            for _ in occurrence(tracer, s, layer):
                if site == "layer":  # the block's output becomes its input plus the replaced contribution
                    entering = sites.first(engine.at(s.block(layer)).input).clone()
                    out = _live(engine, s, "resid", layer)
                    for row, _column in rows:
                        out[row] = entering[row] + replacement[layer].to(out.dtype)
                else:
                    _write(_live(engine, s, site, layer), rows, replacement[layer], site, s.head_width)
        logits = nnsight.save(engine.envoy.output.logits[:, readout].float().cpu())
    return logits
