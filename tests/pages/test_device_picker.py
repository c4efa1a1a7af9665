"""The sidebar's Device / Precision pickers (app/views/device_picker.py): URL-bound, on every live page, and the
choice reaches the results (AppTest on the Similarity and Models pages)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
LIVE_PAGES = ("fill_mask", "electra", "spans", "similarity", "attention_maps", "decoding", "mechanisms", "models")


def _app(page: str) -> AppTest:
    return AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=240)


def _captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


@pytest.mark.parametrize("page", LIVE_PAGES)
def test_every_live_page_draws_the_pickers(page: str) -> None:
    source = (ROOT / "pages" / f"{page}.py").read_text(encoding="utf-8")
    assert "device_picker.pick()" in source  # the one shared widget, passed on to the cached wrappers


def test_similarity_caption_shows_the_sidebar_choice() -> None:
    at = _app("similarity")
    at.query_params["device"], at.query_params["dtype"] = "cpu", "float32"
    at.run()
    assert not at.exception
    assert at.sidebar.selectbox(key="placement_device").value == "cpu"
    assert any("cpu · float32" in c for c in _captions(at)), _captions(at)
    at.sidebar.selectbox(key="placement_dtype").set_value("bfloat16").run()  # a new choice: a new cache key
    assert not at.exception
    assert any("cpu · bfloat16" in c for c in _captions(at)), _captions(at)
    assert at.query_params["dtype"] == ["bfloat16"] or at.query_params["dtype"] == "bfloat16"


def test_models_page_offers_only_what_runs_here() -> None:
    at = _app("models")
    at.query_params["device"], at.query_params["dtype"] = "TPU", "bf16"  # a bad device falls back, an alias works
    at.run()
    assert not at.exception
    device, dtype = at.sidebar.selectbox(key="placement_device"), at.sidebar.selectbox(key="placement_dtype")
    assert device.value == "auto" and dtype.value == "bfloat16"
    if not torch.cuda.is_available():
        assert "cuda" not in device.options
        assert "float16" not in dtype.options  # auto means the CPU here: float16 is refused there
    assert any("bfloat16" in c and "sidebar: auto · bfloat16" in c for c in _captions(at)), _captions(at)
    assert "device" not in at.query_params  # auto stays out of the URL
