"""Transformer Explorer: the library behind the app and the CLI (never imports streamlit).

Importing this package sets the Hugging Face hub to offline mode unless the user chose
otherwise: huggingface_hub reads ``HF_HUB_OFFLINE`` once at import time, and without it a
missing file costs 20-70 s of network retries. Downloads are an explicit action
(``explorer.runtime.download.download``), which lifts offline mode for that call only.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from explorer.core.errors import ExplorerError  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"

__all__ = ["ASSETS", "ROOT", "ExplorerError"]
