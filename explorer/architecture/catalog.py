"""The variant catalog: one record per transformer variant, loaded from ``assets/catalog.json``.

The data lives in assets (so teachers can add a variant without touching code); this module
only validates and serves it. Each variant points at a ``config.json`` in ``assets/configs``:
published files are kept byte for byte, the others hold the published hyperparameters with
their source named in ``config_source``.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from explorer import ASSETS
from explorer.core.errors import ExplorerError, shorten

__all__ = [
    "FAMILIES", "CATALOG_FILE", "Variant", "load_catalog", "keys", "get_variant", "config_text",
    "variant_config",
]


FAMILIES = ("encoder", "decoder", "encoder-decoder")
CATALOG_FILE = ASSETS / "catalog.json"


@dataclass(frozen=True)
class Variant:
    """One catalog entry (see assets/catalog.json for the data)."""

    key: str
    name: str
    family: str
    year: int
    paper: str
    paper_title: str
    reference_checkpoint: str | None
    model_type: str
    config_file: str
    config_source: str
    head: str
    objectives: tuple[str, ...]
    attention: str
    positions: str
    idea: str
    headline: tuple[str, ...]
    published_params: int | None
    published_params_scope: str | None
    published_params_source: str | None
    tokenizer: str
    tokenizer_note: str | None
    month: int  # publication month (arXiv first submission unless the catalog text says otherwise)
    derived_from: tuple[dict[str, str], ...]  # [{"key": parent, "relation": how}], see explorer.architecture.lineage
    extra: dict[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["objectives"], d["headline"] = list(self.objectives), list(self.headline)
        return d


def _parse(record: dict[str, Any]) -> Variant:
    fields = set(Variant.__dataclass_fields__)
    missing = fields - set(record) - {"extra"}
    if missing:
        raise ExplorerError(
            f"Catalog entry {shorten(record.get('key', '?'))!r} lacks {sorted(missing)}: fix assets/catalog.json."
        )
    data = {k: record[k] for k in fields if k in record}
    data["objectives"] = tuple(data["objectives"] or ())
    data["headline"] = tuple(data["headline"] or ())
    data["derived_from"] = tuple(dict(d) for d in data["derived_from"] or ())
    data["extra"] = dict(record.get("extra") or {})
    if data["family"] not in FAMILIES:
        raise ExplorerError(f"Catalog entry {shorten(data['key'])!r} has unknown family {shorten(data['family'])!r}.")
    return Variant(**data)


@lru_cache(maxsize=1)
def load_catalog() -> dict[str, Variant]:
    """All variants by key, in catalog order."""
    try:
        records = json.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ExplorerError(f"Cannot read {CATALOG_FILE}: {err}. Restore it from git.") from err
    variants = [_parse(r) for r in records]
    return {v.key: v for v in variants}


def keys() -> list[str]:
    """Every variant key, in catalog order."""
    return list(load_catalog())


def get_variant(key: str) -> Variant:
    """The variant with this key; an unknown key gets suggestions.

    >>> variant = get_variant("bert-base")
    >>> variant.name, variant.model_type, variant.year
    ('BERT-base', 'bert', 2018)
    """
    catalog = load_catalog()
    if key in catalog:
        return catalog[key]
    close = difflib.get_close_matches(key[:200], list(catalog), n=3, cutoff=0.5)  # difflib is quadratic
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise ExplorerError(
        f"Unknown variant {shorten(key)!r}.{hint} Run `python -m explorer list` to see all {len(catalog)} keys."
    )


@lru_cache(maxsize=128)
def _config_text(config_file: str) -> str:
    path = ASSETS / config_file
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise ExplorerError(f"Config file {path} is missing: restore assets/ from git.") from err


def config_text(key: str) -> str:
    """The variant's config.json exactly as stored."""
    return _config_text(get_variant(key).config_file)


def variant_config(key: str) -> dict[str, Any]:
    """The variant's config.json as a fresh dict (safe to modify)."""
    return json.loads(_config_text(get_variant(key).config_file))
