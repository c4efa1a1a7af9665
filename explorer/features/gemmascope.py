"""Gemma Scope's layouts, read: Gemma Scope 2's ``params.safetensors`` (and ``config.json``) and Gemma Scope's
``params.npz``.

The arrays are ``w_enc (d_in, width)``, ``w_dec (width, d_out)``, ``b_enc``, ``b_dec``, ``threshold`` (spelled
``W_enc``, ``W_dec`` in Gemma Scope 1) and, for Gemma Scope 2's skip transcoders, ``affine_skip_connection
(d_in, d_out)``. Every one is a JumpReLU dictionary exactly as Google DeepMind's tutorial computes it:
``pre = x @ w_enc + b_enc``, ``f = relu(pre) * (pre > threshold)``, ``y = f @ w_dec + b_dec (+ x @ affine_skip)``:
no decoder bias subtracted from the input, no normalisation (:class:`~explorer.features.dictionary.Shape` with
``apply_b_dec_to_input=False``).

Where it reads: ``config.json``'s ``hf_hook_point_in`` / ``hf_hook_point_out`` when given, else the folder's names
as SAELens reads them for Gemma 3 (``resid_post/layer_9_width_16k_l0_small``: ``model.layers.9.output``;
``attn_out``: the attention's output projection's input; ``mlp_out``: the post-MLP norm's output; ``transcoder``:
the pre-MLP norm's output to the post-MLP norm's output). The folder's name is also what the release claims (its
width and L0 band: small 10-20, medium 30-60, big 90-150, from its announcement).
"""

from __future__ import annotations

import re
from pathlib import Path

import torch

from explorer.core import userfiles
from explorer.core.errors import ExplorerError, shorten
from explorer.features.about import About
from explorer.features.dictionary import Dictionary, Shape

__all__ = ["is_gemma_scope", "read"]

PARAMS, PARAMS_NPZ, CONFIG = "params.safetensors", "params.npz", "config.json"
L0_BANDS = {"small": "10-20", "medium": "30-60", "big": "90-150"}
_SPELLINGS = {"W_enc": ("w_enc", "W_enc"), "W_dec": ("w_dec", "W_dec"), "b_enc": ("b_enc",), "b_dec": ("b_dec",),
              "threshold": ("threshold",)}
_SKIP = ("affine_skip_connection", "w_skip", "W_skip")
_KINDS = ("resid_post", "attn_out", "mlp_out", "transcoder")


def is_gemma_scope(folder: Path) -> bool:
    return (folder / PARAMS).is_file() or (folder / PARAMS_NPZ).is_file()


def _arrays(folder: Path) -> dict[str, torch.Tensor]:
    if (folder / PARAMS).is_file():
        from safetensors.torch import load_file

        return load_file(str(folder / PARAMS))
    import numpy as np

    with np.load(folder / PARAMS_NPZ, allow_pickle=False) as data:
        return {k: torch.from_numpy(np.asarray(data[k])) for k in data.files}


def _pick(arrays: dict[str, torch.Tensor], names: tuple[str, ...], folder: Path) -> torch.Tensor | None:
    for name in names:
        if name in arrays:
            return arrays[name].float()
    return None


def _where(folder: Path, config: dict[str, object]) -> tuple[str, int | None, str | None, str | None]:
    """(the kind of folder, layer, hook in, hook out) from config.json, else from the folder's names."""
    text = "/".join(folder.parts[-2:])
    kind = next((k for k in _KINDS if k in text), "resid_post")
    found = re.search(r"layer_(\d+)", folder.name)
    layer = int(found.group(1)) if found else None
    given_in, given_out = config.get("hf_hook_point_in"), config.get("hf_hook_point_out")
    if isinstance(given_in, str):
        return kind, layer, given_in, given_out if isinstance(given_out, str) else None
    if layer is None:
        return kind, None, None, None
    base = f"model.layers.{layer}"
    hooks = {"resid_post": (f"{base}.output", None), "attn_out": (f"{base}.self_attn.o_proj.input", None),
             "mlp_out": (f"{base}.post_feedforward_layernorm.output", None),
             "transcoder": (f"{base}.pre_feedforward_layernorm.output", f"{base}.post_feedforward_layernorm.output")}
    return kind, layer, *hooks[kind]


def _claims(folder: Path, config: dict[str, object]) -> dict[str, object]:
    claims: dict[str, object] = {k: v for k, v in config.items() if isinstance(v, str | int | float) and k in
                                 ("model_name", "width", "l0", "hf_hook_point_in", "hf_hook_point_out")}
    band = re.search(r"l0_(small|medium|big)", folder.name)
    if band:
        claims["l0"] = f"{L0_BANDS[band.group(1)]} ({band.group(0)}, from the folder's name)"
    width = re.search(r"width_(\w+?)(?:_|$)", folder.name)
    if width:
        claims["width"] = width.group(1)
    return claims


def read(folder: Path) -> tuple[Dictionary, About]:
    """The JumpReLU dictionary of a Gemma Scope folder (float32) and where it reads."""
    config = userfiles.loads_json(userfiles.read_path(folder / CONFIG, 1 << 20, CONFIG), CONFIG) \
        if (folder / CONFIG).is_file() else {}
    config = config if isinstance(config, dict) else {}
    arrays = _arrays(folder)
    got = {name: _pick(arrays, spellings, folder) for name, spellings in _SPELLINGS.items()}
    missing = [name for name, value in got.items() if value is None]
    if missing:
        raise ExplorerError(f"{shorten(folder.name)}: no {', '.join(missing)} among its arrays "
                            f"({', '.join(sorted(arrays)[:8])}): this is not a Gemma Scope JumpReLU dictionary.")
    skip = _pick(arrays, _SKIP, folder)
    w_enc, w_dec = got["W_enc"], got["W_dec"]
    assert w_enc is not None and w_dec is not None
    d = Dictionary(Shape(d_in=int(w_enc.shape[0]), width=int(w_enc.shape[1]), d_out=int(w_dec.shape[1]),
                         activation="jumprelu", apply_b_dec_to_input=False, skip=skip is not None))
    with torch.no_grad():
        for name in _SPELLINGS:
            value = got[name]
            assert value is not None
            target = getattr(d, name)
            if tuple(value.shape) != tuple(target.shape):
                raise ExplorerError(f"{shorten(folder.name)}: {name} is {tuple(value.shape)}, expected "
                                    f"{tuple(target.shape)} from w_enc and w_dec.")
            target.copy_(value)
        if skip is not None and d.W_skip is not None:
            d.W_skip.copy_(skip.T)  # stored (d_in, d_out) and applied as x @ skip; ours is (d_out, d_in)
    kind, layer, hook_in, hook_out = _where(folder, config)
    about = About("transcoder" if kind == "transcoder" else "jumprelu", "gemma-scope", folder.name,
                  str(config.get("model_name")) if config.get("model_name") else None, None, layer,
                  hook_in=hook_in, hook_out=hook_out, claims=_claims(folder, config))
    return d.requires_grad_(False), about
