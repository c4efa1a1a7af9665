"""SAELens's folder layout, read and written: ``cfg.json`` and ``sae_weights.safetensors``.

The weights are ``W_enc (d_in, d_sae)``, ``b_enc``, ``W_dec (d_sae, d_out)``, ``b_dec`` and, by architecture,
``threshold`` (``jumprelu``, ``jumprelu_transcoder``, ``jumprelu_skip_transcoder``) and ``W_skip (d_out, d_in)``
(the skip transcoders). ``cfg.json`` (SAELens 6; the pre-6 spellings ``hook_point``, ``activation_fn_str`` and
``activation_fn_kwargs: {k}`` are read too) gives ``architecture`` (``standard``, ``topk``, ``jumprelu`` and the
transcoders), ``d_in``, ``d_sae``, ``d_out``, ``k``, ``apply_b_dec_to_input``, ``normalize_activations`` (a scale
SAELens kept apart in ``activation_scaler.json`` is folded into the weights, as its
``fold_activation_norm_scaling_factor`` does) and ``metadata`` (``model_name``, ``hook_name``, ``hf_hook_name``,
``hook_name_out``, ...). The formulas are :mod:`explorer.features.dictionary`'s, which are SAELens's.

A TransformerLens hook name (``blocks.9.hook_resid_post``) becomes our site; a Hugging Face one
(``model.layers.9.output``, SAELens's ``hf_hook_name``) is kept as the module path it names. Ours are written with
both, the Hugging Face one exact for this model.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from explorer.core import userfiles
from explorer.core.errors import ExplorerError, shorten
from explorer.features.about import About
from explorer.features.dictionary import Dictionary, Shape

__all__ = ["CFG", "WEIGHTS", "is_saelens", "read", "write"]

CFG, WEIGHTS, SCALER = "cfg.json", "sae_weights.safetensors", "activation_scaler.json"
MAX_CFG_BYTES = 1 << 20
ARCHITECTURES = {"standard": ("relu", False), "topk": ("topk", False), "jumprelu": ("jumprelu", False),
                 "transcoder": ("relu", False), "skip_transcoder": ("relu", True),
                 "jumprelu_transcoder": ("jumprelu", False), "jumprelu_skip_transcoder": ("jumprelu", True)}
TL_SITES = {"hook_resid_post": "resid", "hook_attn_out": "attn", "hook_mlp_out": "mlp", "attn.hook_z": "heads"}
_TL = re.compile(r"^blocks\.(\d+)\.(hook_resid_post|hook_attn_out|hook_mlp_out|attn\.hook_z)$")
_OUR_NAMES = {"resid": "hook_resid_post", "attn": "hook_attn_out", "mlp": "hook_mlp_out", "heads": "attn.hook_z"}


def is_saelens(folder: Path) -> bool:
    return (folder / CFG).is_file() and (folder / WEIGHTS).is_file()


def _json(path: Path) -> dict[str, object]:
    data = userfiles.loads_json(userfiles.read_path(path, MAX_CFG_BYTES, path.name), path.name, MAX_CFG_BYTES)
    if not isinstance(data, dict):
        raise ExplorerError(f"{path.name} is not a JSON object: this is not an SAELens folder.")
    return data


def _config(folder: Path) -> dict[str, object]:
    """cfg.json with the pre-6 spellings turned into SAELens 6's."""
    cfg = _json(folder / CFG)
    meta = dict(cfg.get("metadata") or cfg.get("meta") or {})  # type: ignore[call-overload]
    for key in ("model_name", "hook_name", "hook_point", "hf_hook_name", "hook_name_out", "hf_hook_name_out",
                "context_size", "dataset_path", "hook_layer"):
        if key in cfg and key not in meta:
            meta[key] = cfg[key]
    meta.setdefault("hook_name", meta.get("hook_point"))
    kwargs = cfg.get("activation_fn_kwargs")
    if cfg.get("activation_fn_str", cfg.get("activation_fn")) == "topk" and isinstance(kwargs, dict):
        cfg.setdefault("k", kwargs.get("k"))
        cfg["architecture"] = "topk"
    cfg["metadata"] = meta
    return cfg


def _whole(cfg: dict[str, object], key: str, folder: Path) -> int:
    value = cfg.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExplorerError(f"{shorten(folder.name)}/{CFG}: {key} must be a whole number, not "
                            f"{shorten(repr(value))}: this is not an SAELens config.")
    return value


def _shape(cfg: dict[str, object], folder: Path) -> Shape:
    arch = str(cfg.get("architecture", "standard"))
    if arch not in ARCHITECTURES:
        raise ExplorerError(f"{shorten(folder.name)}: SAELens architecture {shorten(arch)!r} is not read here "
                            f"(the explorer reads {', '.join(ARCHITECTURES)}).")
    activation, skip = ARCHITECTURES[arch]
    normalize = str(cfg.get("normalize_activations") or "none")
    if normalize == "expected_average_only_in":
        normalize = "none"  # its scale is folded below, from activation_scaler.json
    d_in, d_sae, d_out = _whole(cfg, "d_in", folder), _whole(cfg, "d_sae", folder), cfg.get("d_out")
    return Shape(d_in=d_in, width=d_sae, d_out=_whole(cfg, "d_out", folder) if d_out is not None else d_in,
                 activation=activation, k=_whole(cfg, "k", folder) if cfg.get("k") is not None else None,
                 apply_b_dec_to_input=bool(cfg.get("apply_b_dec_to_input", "transcoder" not in arch)),
                 normalize=normalize, skip=skip).checked()


def _scale(cfg: dict[str, object], folder: Path) -> float | None:
    if cfg.get("normalize_activations") != "expected_average_only_in":
        return None
    scaler = _json(folder / SCALER) if (folder / SCALER).is_file() else {}
    factor = scaler.get("scaling_factor")
    if not isinstance(factor, int | float):
        raise ExplorerError(f"{shorten(folder.name)} normalises its input by a scale it does not ship "
                            f"({SCALER} is missing): fold the scale into its weights with SAELens first.")
    return float(factor)


def _about(cfg: dict[str, object], folder: Path, activation: str, transcoder: bool) -> About:
    meta = cfg["metadata"]
    assert isinstance(meta, dict)
    hook, hf_hook = str(meta.get("hook_name") or ""), meta.get("hf_hook_name")
    match = _TL.match(hook)
    kind = "transcoder" if transcoder else activation
    claims = {k: meta[k] for k in ("model_name", "hook_name", "dataset_path", "context_size") if meta.get(k)}
    if match and not hf_hook and not transcoder:
        return About(kind, "saelens", folder.name, str(meta.get("model_name") or "") or None,
                     TL_SITES[match.group(2)], int(match.group(1)), claims=claims)
    layer = int(match.group(1)) if match else None
    hook_out = meta.get("hf_hook_name_out")
    if transcoder and not hf_hook:
        return About(kind, "saelens", folder.name, str(meta.get("model_name") or "") or None, "mlp", layer,
                     claims=claims)
    return About(kind, "saelens", folder.name, str(meta.get("model_name") or "") or None, None, layer,
                 hook_in=str(hf_hook) if hf_hook else None, hook_out=str(hook_out) if hook_out else None,
                 claims=claims)


def read(folder: Path) -> tuple[Dictionary, About]:
    """The dictionary of an SAELens folder (float32) and what its config says."""
    from safetensors.torch import load_file

    cfg = _config(folder)
    shape = _shape(cfg, folder)
    tensors = load_file(str(folder / WEIGHTS))
    d = Dictionary(shape)
    expected = {"W_enc": d.W_enc, "b_enc": d.b_enc, "W_dec": d.W_dec, "b_dec": d.b_dec}
    if shape.activation == "jumprelu":
        expected["threshold"] = d.threshold
    if d.W_skip is not None:
        expected["W_skip"] = d.W_skip
    with torch.no_grad():
        for name, param in expected.items():
            if name not in tensors:
                raise ExplorerError(f"{shorten(folder.name)}/{WEIGHTS} has no {name}: it does not match its "
                                    f"cfg.json ({cfg.get('architecture')}).")
            if tuple(tensors[name].shape) != tuple(param.shape):
                raise ExplorerError(f"{shorten(folder.name)}/{WEIGHTS}: {name} is {tuple(tensors[name].shape)}, "
                                    f"its cfg.json says {tuple(param.shape)}.")
            param.copy_(tensors[name].float())
        factor = _scale(cfg, folder)
        if factor is not None:  # SAELens's fold_activation_norm_scaling_factor
            d.W_enc.mul_(factor)
            d.W_dec.div_(factor)
            d.b_dec.div_(factor)
    about = _about(cfg, folder, shape.activation, "transcoder" in str(cfg.get("architecture")))
    return d.requires_grad_(False), about


def _architecture(d: Dictionary, about: About) -> str:
    s = d.shape
    if not about.transcoder:
        return "standard" if s.activation == "relu" else s.activation
    name = ("skip_" if s.skip else "") + "transcoder"
    return f"jumprelu_{name}" if s.activation == "jumprelu" else name


def write(folder: Path, d: Dictionary, about: About, hook_names: tuple[str, str | None], model_name: str,
          context_size: int, dtype: torch.dtype = torch.float32) -> None:
    """``cfg.json`` and ``sae_weights.safetensors`` of ``d`` into ``folder`` (SAELens 6's layout)."""
    from safetensors.torch import save_file

    s = d.shape
    tensors = {"W_enc": d.W_enc, "b_enc": d.b_enc, "W_dec": d.W_dec, "b_dec": d.b_dec}
    if s.activation == "jumprelu":
        tensors["threshold"] = d.threshold
    if d.W_skip is not None:
        tensors["W_skip"] = d.W_skip
    save_file({k: v.detach().to(dtype).contiguous().cpu() for k, v in tensors.items()}, str(folder / WEIGHTS))
    tl = f"blocks.{about.layer}.{_OUR_NAMES.get(about.site or '', 'hook_mlp_in')}" if about.layer is not None else None
    meta: dict[str, object] = {"model_name": model_name, "hook_name": tl or hook_names[0],
                               "hf_hook_name": hook_names[0], "context_size": context_size,
                               "prepend_bos": True, "dataset_path": about.corpus, "hook_layer": about.layer}
    if about.transcoder:
        meta.update({"hook_name_out": f"blocks.{about.layer}.hook_mlp_out", "hf_hook_name_out": hook_names[1]})
    cfg: dict[str, object] = {"architecture": _architecture(d, about), "d_in": s.d_in, "d_sae": s.width,
                              "dtype": str(dtype).removeprefix("torch."), "device": "cpu",
                              "apply_b_dec_to_input": s.apply_b_dec_to_input, "normalize_activations": "none",
                              "reshape_activations": "none", "metadata": meta}
    if about.transcoder:
        cfg["d_out"] = s.d_out
    if s.activation == "topk":
        cfg["k"] = s.k
    (folder / CFG).write_text(json.dumps(cfg, indent=2), encoding="utf-8")
