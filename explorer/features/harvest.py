"""Activations harvested once, in parts, and kept on disk within a byte budget: what a dictionary trains on.

A harvest runs windows of a corpus (:mod:`explorer.features.windows`) through the model, a few at a time, reads
one tap (an SAE's site) or two (a transcoder's MLP input and output, :mod:`explorer.features.hooks`) and keeps the
rows of every ordinary token (special tokens left out), stopping each forward at the last tap it needs. Rows go
to parts of :data:`PART_ROWS` rows: ``part-00000.safetensors`` with ``x (n, d_in)``, ``y (n, d_out)`` for a
transcoder, ``token``, ``window`` and ``position`` (n,) int32, and the part's windows ``ids (w, T)``; float16 where
every value fits, float32 otherwise. ``harvest.json`` records the parts done, so a stopped harvest goes on where
it stopped; a harvest is keyed by everything its numbers depend on (the model's weights, the taps, the text, the
windows, the seed, the precision), under ``<cache>/features/activations/``.

Bytes: each row costs ``2 x (d_in + d_out)`` (4 x in float32) plus 12; the harvest is refused before any work when
it would pass its budget or the disk's free space, and the oldest other harvests are removed so that all of them
stay within :data:`CACHE_BYTES`.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from explorer.core import persist
from explorer.core.errors import ExplorerError
from explorer.features import hooks, windows
from explorer.features.hooks import Tap
from explorer.runtime import cancel
from explorer.runtime.offload import input_device

if TYPE_CHECKING:  # typing only: the loader's model types
    from explorer.runtime.loading import LoadedModel

__all__ = ["BUDGET_BYTES", "CACHE_BYTES", "PART_ROWS", "Harvest", "harvest", "planned_bytes", "root"]

PART_ROWS = 16_384  # rows per file: 20 MB of Gemma 3's 640-wide stream in float16
WINDOWS_PER_FORWARD = 8
BUDGET_BYTES = 2 * 2**30  # one harvest (the default run on Gemma 3 270M takes 340 MB)
CACHE_BYTES = 8 * 2**30  # every harvest together; the least recently used go first
HALF_MAX = 60_000.0  # float16's largest is 65,504: a part with a larger value is kept in float32
Progress = Callable[[float, str], None]


def root() -> Path:
    return persist.cache_dir() / "features" / "activations"


@dataclass(frozen=True)
class Harvest:
    """A finished (or stopped) harvest on disk."""

    folder: Path
    rows: int
    d_in: int
    d_out: int | None  # a transcoder's target width; None for an SAE
    parts: int
    complete: bool

    def part(self, i: int) -> dict[str, torch.Tensor]:
        from safetensors.torch import load_file

        return load_file(str(self.folder / f"part-{i:05d}.safetensors"))

    def batches(self, batch: int, seed: int, epoch: int = 0) -> Iterator[tuple[torch.Tensor, torch.Tensor | None]]:
        """``(x (batch, d_in), y (batch, d_out) or None)`` float32 batches of one epoch: the parts in a seeded order,
        two at a time, their rows shuffled together (a partial last batch is dropped)."""
        g = torch.Generator().manual_seed(seed * 1_000 + epoch)
        order = torch.randperm(self.parts, generator=g).tolist()
        for i in range(0, len(order), 2):
            loaded = [self.part(j) for j in order[i:i + 2]]
            x = torch.cat([p["x"] for p in loaded])
            y = torch.cat([p["y"] for p in loaded]) if self.d_out is not None else None
            perm = torch.randperm(x.shape[0], generator=g)
            for start in range(0, x.shape[0] - batch + 1, batch):
                take = perm[start:start + batch]
                yield x[take].float(), None if y is None else y[take].float()


def planned_bytes(rows: int, d_in: int, d_out: int | None) -> int:
    """Bytes a harvest of ``rows`` rows takes on disk (float16; a float32 part takes twice its activations)."""
    return rows * (2 * (d_in + (d_out or 0)) + 12)


def _key(loaded_key: str, stamp: str, taps: Sequence[Tap], text: str, seq_len: int, seed: int, dtype: str) -> str:
    return persist.fingerprint("features-harvest-1", loaded_key, stamp, [t.hook_name for t in taps],
                               [t.call for t in taps], text, seq_len, seed, dtype)


def _check_room(folder: Path, need: int, budget: int) -> None:
    if need > budget:
        raise ExplorerError(f"This harvest needs about {need / 2**20:,.0f} MB on disk, more than its budget of "
                            f"{budget / 2**20:,.0f} MB: ask for fewer tokens.")
    folder.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder.parent).free
    if need > free * 0.9:
        raise ExplorerError(f"This harvest needs about {need / 2**20:,.0f} MB and the disk has "
                            f"{free / 2**20:,.0f} MB free: free some space or ask for fewer tokens.")


def _evict(keep: Path, need: int) -> None:
    """Remove the least recently used other harvests until all of them, with ``need`` more, fit CACHE_BYTES."""
    others = [p for p in root().iterdir() if p.is_dir() and p != keep] if root().is_dir() else []
    sizes = {p: sum(f.stat().st_size for f in p.glob("*") if f.is_file()) for p in others}
    total = sum(sizes.values()) + need
    for p in sorted(others, key=lambda q: (q / "harvest.json").stat().st_mtime if (q / "harvest.json").exists() else 0):
        if total <= CACHE_BYTES:
            break
        shutil.rmtree(p, ignore_errors=True)
        total -= sizes[p]


@dataclass
class _State:
    """What ``harvest.json`` records: windows read, rows kept, parts written, the taps' widths, finished or not."""

    windows: int = 0
    rows: int = 0
    parts: int = 0
    widths: tuple[int, ...] = ()
    complete: bool = False

    @classmethod
    def read(cls, folder: Path) -> _State:
        try:
            data = json.loads((folder / "harvest.json").read_text(encoding="utf-8"))
            return cls(int(data["windows"]), int(data["rows"]), int(data["parts"]),
                       tuple(int(w) for w in data["widths"]), bool(data["complete"]))
        except (OSError, ValueError, KeyError, TypeError):
            return cls()

    def save(self, folder: Path) -> None:
        tmp = folder / ".harvest.json.tmp"
        tmp.write_text(json.dumps({"windows": self.windows, "rows": self.rows, "parts": self.parts,
                                   "widths": list(self.widths), "complete": self.complete}), encoding="utf-8")
        tmp.replace(folder / "harvest.json")

    def harvest(self, folder: Path) -> Harvest:
        (folder / "harvest.json").touch()  # recently used: evicted last
        return Harvest(folder, self.rows, self.widths[0], self.widths[1] if len(self.widths) > 1 else None,
                       self.parts, self.complete)


def _write_part(folder: Path, index: int, rows: dict[str, list[torch.Tensor]], ids: torch.Tensor) -> int:
    from safetensors.torch import save_file

    tensors = {name: torch.cat(parts) for name, parts in rows.items()}
    for name in ("x", "y"):
        if name in tensors:
            value = tensors[name]
            fits = bool(value.abs().max() < HALF_MAX) if value.numel() else True
            tensors[name] = value.half() if fits else value.float()
    tensors["ids"] = ids.to(torch.int32)
    tmp = folder / f".part-{index:05d}.tmp"
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(tmp))
    tmp.replace(folder / f"part-{index:05d}.safetensors")
    return int(tensors["x"].shape[0])


def _forward(model: torch.nn.Module, family: str, taps: Sequence[Tap], ids: torch.Tensor) -> list[torch.Tensor]:
    """Each tap's value ``(B, T, X)`` float32 on the CPU for the windows ``ids``, the forward stopped at the last."""
    got, _ = hooks.run(model, windows.inputs(model, family, ids.to(input_device(model))), reads=taps, stop_at=taps[-1])
    return [got[t].float().cpu() for t in taps]


def _rows(values: list[torch.Tensor], win: windows.Windows, first_window: int) -> dict[str, list[torch.Tensor]]:
    """The rows of the ordinary tokens of a batch of windows (window index relative to the part)."""
    b, t = (~win.special).nonzero(as_tuple=True)
    out = {"x": [values[0][b, t]], "token": [win.ids[b, t].to(torch.int32)],
           "window": [(b + first_window).to(torch.int32)], "position": [t.to(torch.int32)]}
    if len(values) > 1:
        out["y"] = [values[1][b, t]]
    return out


def harvest(loaded: LoadedModel, family: str, taps: Sequence[Tap], stack: str | None,
            docs: tuple[tuple[str, ...], ...], text: str, rows: int, seq_len: int, seed: int, *, stamp: str,
            progress: Progress | None = None, should_stop: Callable[[], bool] | None = None,
            budget: int = BUDGET_BYTES) -> Harvest:
    """At least ``rows`` rows of ``taps`` on windows of ``docs`` (named ``text``), on disk (see the module
    docstring); a stopped harvest returns what it has (``complete`` False) and continues when asked again."""
    dtype = str(next(loaded.model.parameters()).dtype)
    folder = root() / _key(loaded.key, stamp, taps, text, seq_len, seed, dtype)
    state = _State.read(folder)
    if state.complete and state.rows >= rows:
        return state.harvest(folder)
    per_window = seq_len - sum(len(p) for p in windows.frame(loaded.tokenizer))
    source = windows.cut(loaded.tokenizer, docs, -(-rows // max(1, per_window)) + 1, seq_len, seed)
    shown = windows.tokens_at(loaded.model, family, stack, source)
    if not state.widths:
        state = _first(loaded, family, taps, folder, source, rows, budget)
    _Run(loaded, family, taps, folder, state, progress, should_stop).go(source, shown, rows)
    final = _State.read(folder)
    if not final.rows:
        raise ExplorerError("No activations were harvested (stopped before the first part): start again.")
    return final.harvest(folder)


def _first(loaded: LoadedModel, family: str, taps: Sequence[Tap], folder: Path, source: windows.Windows,
           rows: int, budget: int) -> _State:
    """The taps' widths from one window, the room checked and older harvests evicted, before any part is written."""
    with hooks.session(loaded.model):
        values = _forward(loaded.model, family, taps, source.ids[:1])
    widths = tuple(int(v.shape[-1]) for v in values)
    need = planned_bytes(rows, widths[0], widths[1] if len(widths) > 1 else None)
    _check_room(folder, need, budget)
    _evict(folder, need)
    folder.mkdir(parents=True, exist_ok=True)
    return _State(widths=widths)


@dataclass
class _Run:
    """One harvesting pass: forwards a few windows at a time, writes a part whenever one is full (and what it holds
    when stopped), records the state after each part."""

    loaded: LoadedModel
    family: str
    taps: Sequence[Tap]
    folder: Path
    state: _State
    progress: Progress | None
    should_stop: Callable[[], bool] | None

    def go(self, source: windows.Windows, shown: windows.Windows, rows: int) -> None:
        buffer: dict[str, list[torch.Tensor]] = {}
        first, started, before = self.state.windows, time.perf_counter(), self.state.rows
        try:
            while self.state.rows + _held(buffer) < rows and self.state.windows < source.count:
                if self.should_stop is not None and self.should_stop():
                    break
                cancel.check()
                stop = min(source.count, self.state.windows + WINDOWS_PER_FORWARD)
                with hooks.session(self.loaded.model):
                    values = _forward(self.loaded.model, self.family, self.taps, source.ids[self.state.windows:stop])
                kept = _rows(values, shown.part(self.state.windows, stop), self.state.windows - first)
                for name, got in kept.items():
                    buffer.setdefault(name, []).extend(got)
                self.state.windows = stop
                if _held(buffer) >= PART_ROWS or self.state.rows + _held(buffer) >= rows:
                    self._flush(buffer, shown, first, rows)
                    buffer, first = {}, self.state.windows
                self._say(rows, _held(buffer), before, started)
        finally:
            if buffer:  # stopped mid-part (Stop, the time budget): what was read is kept as a shorter part
                self._flush(buffer, shown, first, rows)

    def _flush(self, buffer: dict[str, list[torch.Tensor]], shown: windows.Windows, first: int, rows: int) -> None:
        self.state.rows += _write_part(self.folder, self.state.parts, buffer, shown.ids[first:self.state.windows])
        self.state.parts += 1
        self.state.complete = self.state.rows >= rows
        self.state.save(self.folder)

    def _say(self, rows: int, held: int, before: int, started: float) -> None:
        if self.progress is None:
            return
        have = self.state.rows + held
        pace = (have - before) / max(1e-9, time.perf_counter() - started)
        self.progress(min(1.0, have / rows), f"harvesting activations: {have:,} of {rows:,} tokens "
                                             f"({pace:,.0f} tokens/s)")


def _held(buffer: dict[str, list[torch.Tensor]]) -> int:
    return sum(int(t.shape[0]) for t in buffer.get("x", []))
