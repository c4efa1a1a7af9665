"""Published configs in ``assets/configs`` built on the meta device (test helper: no weights allocated).

    model, config = meta_model("bert-base-uncased", "mlm")
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from explorer.architecture import build

REF = Path(__file__).resolve().parents[1] / "assets" / "configs"


def meta_model(name: str, head: str | None = None) -> tuple[Any, Any]:
    """(model, config) for ``assets/configs/<name>.json``, with ``head`` or the config's default head."""
    config = build.config_from_dict(json.loads((REF / f"{name}.json").read_text()))
    return build.instantiate(config, head or build.default_head(config)), config
