"""The logit lens: every layer's prediction, read through the model's own final norm and output head.

One hooked forward (:func:`explorer.internals.hooked.streams`) keeps the stream entering the first block
("layer 0", the embeddings) and every block's output; each is read through the model's final norm and head
(``Sites.readout``: a decoder's ``lm_head``, a masked LM's MLM head, T5's rescaling, BART's logits bias), at
the position whose prediction is asked (a decoder's last token, a masked LM's blank, an encoder-decoder's
decoder position before the span). Per layer: the top-k tokens, the target's rank and probability, the entropy
and the KL divergence to the final distribution (nats). The last layer's reading is the model's own output
(tested to 1e-5). With ``tuned``, each layer's stream first passes its translator
(:mod:`explorer.explain.translator`): the tuned lens.

The grid (layers x positions, each cell the top-1 token and its probability) reads every position; the CLI asks
for one position only (``grid=False``), which is the benchmark's "lens over every layer at one position".
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

import torch

from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice, texts
from explorer.explain import framer, statistics, translator
from explorer.explain import target as targets
from explorer.explain import task as tasks
from explorer.explain.frame import Frame
from explorer.explain.scorer import no_logits
from explorer.internals import hooked, sites
from explorer.runtime import cancel, loading
from explorer.runtime.offload import input_device
from explorer.runtime.placement import ran_on
from explorer.runtime.resolve import ModelRef

if TYPE_CHECKING:  # typing only: no runtime import of the loader's model types
    from explorer.runtime.loading import LoadedModel

__all__ = ["GRID_CHUNK", "Lens", "LensLayer", "distributions", "lens", "run", "streams"]

GRID_CHUNK = 16  # positions read through the head at once for the grid (Gemma: 16 x 262,144 floats per layer)
# The grid's columns end at the read position: every cell is a pass through the head (Gemma 3: 0.3 GFLOP), so a
# long text shows its last GRID_POSITIONS tokens (the notice says so), not 256 x 19 cells.
GRID_POSITIONS = 16


@dataclass(frozen=True)
class LensLayer:
    layer: int  # 0: the stream entering the first block (the embeddings); i: after block i
    depth: float  # layer / layers: a 6-layer and an 18-layer model on one axis
    top: tuple[tuple[str, float], ...]  # (token, probability), most likely first
    target_rank: int | None
    target_probability: float | None
    entropy: float
    kl_to_final: float


@dataclass(frozen=True)
class Lens:
    """Every layer's reading at one position, and (``grid``) every position's top-1 token per layer."""

    model: str
    kind: str  # "logit" or "tuned"
    task: str
    position: int
    position_token: str
    target: str | None
    layers: tuple[LensLayer, ...]
    tokens: tuple[str, ...] = ()  # the grid's columns: the read row's tokens from grid_start to the read position
    grid_start: int = 0
    grid_tokens: tuple[tuple[str, ...], ...] = ()  # (L+1, T) top-1 token of each layer at each position
    grid_probability: tuple[tuple[float, ...], ...] = ()  # (L+1, T)
    seconds: float = 0.0
    notices: tuple[Notice, ...] = ()
    untrained: bool = False
    device: str = "cpu"
    device_name: str = "cpu"
    dtype: str = "float32"

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["layers"] = [{**asdict(x), "top": [{"token": t, "probability": p} for t, p in x.top]} for x in self.layers]
        out["notices"] = texts(self.notices)
        return out


def _inputs(model: torch.nn.Module, frame: Frame, device: torch.device) -> dict[str, object]:
    ids = torch.tensor([frame.rows[0]], device=device)  # (1, T)
    if frame.kind == "seq2seq":
        return {"input_ids": ids, "decoder_input_ids": torch.tensor([frame.decoder[0]], device=device),
                "use_cache": False}
    if frame.kind == "causal":  # no logits at all: every layer, the last included, is read through the head below
        return {"input_ids": ids, "use_cache": False, **no_logits(model, device)}
    return {"input_ids": ids}


NO_HEAD = ("has no language-model head (it was saved without one, like the bundled all-MiniLM-L6-v2): the lens "
           "needs a head to read its layers as predictions. Its attributions of sentence similarity still work.")


def _sites(model: torch.nn.Module, name: str = "This model") -> sites.Sites:
    found = sites.of(model)
    if not found.has_head:
        raise ExplorerError(f"{name} {NO_HEAD}")
    return found


def streams(model: torch.nn.Module, frame: Frame) -> tuple[sites.Sites, torch.Tensor]:
    """(the sites, the stream at every layer ``(L+1, T, d)``) of the frame's read row (row 0, or its decoder row)."""
    found = _sites(model)
    with torch.inference_mode():  # on the model's view, its lock held: another request's forward waits its turn
        entered, outs, _ = hooked.streams(model, found, _inputs(model, frame, input_device(model)))  # type: ignore[arg-type]
    return found, torch.stack([entered[0], *(o[0] for o in outs)])  # (L+1, T, d)


def _read(model: torch.nn.Module, found: sites.Sites, hidden: torch.Tensor,
          tuned: translator.Translators | None, layers: range) -> torch.Tensor:
    """Log-probabilities ``(len(layers), ..., V)`` float32 of streams ``hidden`` ``(len(layers), ..., d)``."""
    with torch.inference_mode():
        if tuned is not None:
            hidden = torch.stack([tuned(layer, h) for layer, h in zip(layers, hidden, strict=True)])
        return found.readout(model, hidden).float().log_softmax(-1)


def distributions(model: torch.nn.Module, frame: Frame, position: int,
                  tuned: translator.Translators | None = None) -> torch.Tensor:
    """Every layer's log-probabilities at ``position`` of the read row: ``(L+1, V)`` float32."""
    found, stream = streams(model, frame)
    return _read(model, found, stream[:, position], tuned, range(stream.shape[0]))


def _grid(model: torch.nn.Module, found: sites.Sites, stream: torch.Tensor, tuned: translator.Translators | None,
          ) -> tuple[torch.Tensor, torch.Tensor]:
    """(top-1 ids, their probabilities), each ``(L+1, T)``, a few positions through the head at a time."""
    ids, probs = [], []
    for start in range(0, stream.shape[1], GRID_CHUNK):
        cancel.check()
        logp = _read(model, found, stream[:, start:start + GRID_CHUNK], tuned, range(stream.shape[0]))
        best, where = logp.max(-1)  # (L+1, chunk)
        ids.append(where)
        probs.append(best.exp())
    return torch.cat(ids, 1), torch.cat(probs, 1)


def _target_logp(model: torch.nn.Module, found: sites.Sites, stream: torch.Tensor, frame: Frame, position: int,
                 maps: translator.Translators | None, logp: torch.Tensor) -> torch.Tensor | None:
    """Each layer's log-probability of the target ``(L+1,)``: at the asked position, its first token's; at the
    target's own place, the sum over its tokens, each read where it is predicted (a phrase as one number)."""
    if frame.target is None:
        return None
    mine = [t for t in frame.terms if t.row == 0 and t.sign > 0]
    if position != frame.focus or len(mine) < 2:
        return logp[:, frame.target.ids[0]]
    at = [t.at - frame.shift for t in mine]
    each = _read(model, found, stream[:, at], maps, range(stream.shape[0]))  # (L+1, K, V)
    return each.gather(2, torch.tensor([t.token for t in mine], device=each.device).expand(each.shape[0], -1)[
        ..., None])[..., 0].sum(-1)


def _layers(tok, logp: torch.Tensor, aim: torch.Tensor | None, first: int | None, top_k: int,
            ) -> tuple[LensLayer, ...]:
    """Each layer's reading from its log-probabilities ``(L+1, V)`` and the target's ``(L+1,)``."""
    kls, ents = statistics.kl(logp[-1:], logp).tolist(), statistics.entropy(logp).tolist()
    ids, probs = statistics.top_k(logp, top_k)
    ranks = statistics.rank(logp, first).tolist() if first is not None else None
    last, out = logp.shape[0] - 1, []
    for layer in range(logp.shape[0]):
        top = tuple((tok.decode([int(i)]), round(float(p), 6)) for i, p in zip(ids[layer], probs[layer], strict=True))
        out.append(LensLayer(layer, round(layer / last, 4), top, None if ranks is None else int(ranks[layer]),
                             None if aim is None else round(float(aim[layer].exp()), 6),
                             round(ents[layer], 5), round(kls[layer], 5)))
    return tuple(out)


def _position(frame: Frame, position: int | None) -> int:
    """The read position: the text's tokens (a decoder's and an encoder-decoder's up to where the target goes;
    the target's own tokens follow it in the row)."""
    row = frame.decoder[0] if frame.kind == "seq2seq" else frame.rows[0]
    size = len(row) if frame.kind == "masked" else int(frame.focus or 0) + 1
    if position is None:
        return int(frame.focus or 0)
    if isinstance(position, bool) or not isinstance(position, int) or not -size <= position < size:
        raise ExplorerError(f"Position {position!r} is outside the {size} tokens read here: give 0 to "
                            f"{size - 1} (or -1 for the last).")
    return position % size


def lens(loaded: LoadedModel, task: str, text: str, target: str | None = None, *, position: int | None = None,
         top_k: int = 5, tuned: bool = False, grid: bool = True) -> Lens:
    """The (logit or tuned) lens of ``loaded`` on ``text`` (see the module docstring)."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= 50:
        raise ExplorerError(f"top-k must be a whole number from 1 to 50 (got {top_k!r}).")
    if task == "similarity":
        raise ExplorerError(f"{loaded.key} {NO_HEAD}")
    _sites(loaded.model, loaded.key)
    started = time.perf_counter()
    frame = framer.build(loaded, task, text, target)
    found, stream = streams(loaded.model, frame)
    at = _position(frame, position)
    maps, notes = _translators(loaded, found, tuned)
    logp = _read(loaded.model, found, stream[:, at], maps, range(stream.shape[0]))  # (L+1, V)
    tok = loaded.tokenizer
    row = frame.decoder[0] if frame.kind == "seq2seq" else frame.rows[0]
    aim = _target_logp(loaded.model, found, stream, frame, at, maps, logp)
    if frame.target is not None and len(frame.target.ids) > 1 and at == frame.focus:
        notes += (Notice("info", "The target's rank is its first token's; its probability is that of all its "
                                 "tokens, each read where it is predicted."),)
    layers = _layers(tok, logp, aim, frame.target.ids[0] if frame.target else None, top_k)
    result = Lens(loaded.key, "tuned" if tuned else "logit", frame.task, at, tok.decode([row[at]]),
                  frame.target.scored if frame.target else None, layers, notices=frame.notices + notes,
                  untrained=loaded.untrained, **ran_on(loaded))
    if grid:
        start = max(0, at + 1 - GRID_POSITIONS)
        best, probs = _grid(loaded.model, found, stream[:, start:at + 1], maps)
        cut = (Notice("truncated", f"The grid shows the {GRID_POSITIONS} tokens up to the read position (every cell "
                                   "is one more reading through the head)."),) if start else ()
        result = replace(result, tokens=tuple(tok.decode([t]) for t in row[start:at + 1]), grid_start=start,
                         grid_tokens=tuple(tuple(tok.decode([int(i)]) for i in r) for r in best),
                         grid_probability=tuple(tuple(round(float(p), 5) for p in r) for r in probs),
                         notices=result.notices + cut)
    return replace(result, seconds=round(time.perf_counter() - started, 3))


def _translators(loaded: LoadedModel, found: sites.Sites, tuned: bool,
                 ) -> tuple[translator.Translators | None, tuple[Notice, ...]]:
    if not tuned:
        return None, ()
    got = translator.load(loaded.path, loaded.key, found.layers, found.d_model)
    if got is None:
        raise ExplorerError(f"No tuned lens is trained for {loaded.key} yet: train one with `python -m explorer "
                            f"tuned-lens train --model {loaded.key}` (or on the page), then ask again.")
    maps, card = got
    device = input_device(loaded.model)
    return maps.to(device), (Notice("info", f"Tuned lens trained for {card.get('steps')} steps on "
                                            f"{card.get('corpus')} ({card.get('folder')})."),)


def run(ref: ModelRef, text: str, target: str | None = None, *, position: int | None = None, top_k: int = 5,
        tuned: bool = False, grid: bool = True, device: str | None = None, dtype: str | None = None) -> Lens:
    """:func:`lens` after loading ``ref`` for what it predicts (the text and target checked first)."""
    targets.check_typed(text)
    targets.check_typed_target(target)
    if position is not None and not (isinstance(position, int) and -framer.MAX_TOKENS <= position < framer.MAX_TOKENS):
        raise ExplorerError(f"Position {position!r} is beyond the {framer.MAX_TOKENS} tokens a text is read with at "
                            f"most: give a position from 0 (or -1 for the last token).")
    task = tasks.of(ref.family, tasks.has_head(ref), text if isinstance(text, str) else "")
    if task == "similarity":
        raise ExplorerError(f"{ref.spec} {NO_HEAD}")
    loaded = loading.load_model(ref, tasks.loading_task(ref), device=device, dtype=dtype,
                                purpose="Why this prediction")
    return replace(lens(loaded, task, text, target, position=position, top_k=top_k, tuned=tuned, grid=grid),
                   model=ref.spec)
