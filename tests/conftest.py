"""Shared fixtures: repository on sys.path, hub offline, tiny random models saved locally."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import explorer  # noqa: E402,F401  (sets the offline defaults before transformers is imported)
