"""explorer.tasks.defaults: what the Fill-mask and Spans pages offer and start with."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

from explorer.architecture import catalog
from explorer.runtime import weights
from explorer.runtime.resolve import resolve
from explorer.tasks import defaults, infill
from tests.tiny_models import save_tiny


def test_the_fill_mask_page_offers_the_bundled_decoder_first() -> None:
    # lab/ models are trained here: tests/test_checkpoint.py
    keys = [k for k in defaults.fill_keys() if not k.startswith("lab/")]
    assert keys[0] == "gemma3-270m" and resolve(keys[0], None).decoder
    assert set(keys[1:]) == set(defaults.mlm_keys()) and not any(resolve(k, None).decoder for k in keys[1:])


def test_fill_mask_starts_with_the_decoder_and_the_masked_lms_on_disk(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    assert defaults.fill_mask_defaults(str(tmp_path / "none")) == ["gemma3-270m", "bert-base"]  # a masked LM to compare
    shutil.copytree(save_tiny("roberta", tmp_path / "tiny"), tmp_path / "models" / "roberta-base")
    assert defaults.fill_mask_defaults(str(tmp_path / "models")) == ["gemma3-270m", "roberta-base"]
    assert all(k in defaults.fill_keys() for k in defaults.fill_mask_defaults(None))
    assert weights.locate("gemma3-270m").status in ("ready", "not present")


def test_infill_keys_are_the_bundled_decoder_then_t5_and_bart_variants() -> None:
    keys = [k for k in defaults.infill_keys() if not k.startswith("lab/")]
    assert keys[0] == "gemma3-270m" and {"t5-small", "bart-base"} <= set(keys)
    assert all(catalog.get_variant(k).model_type in infill.T5_TYPES + infill.BART_TYPES for k in keys[1:])


def test_spans_start_with_the_ready_ones(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    save_tiny("t5", tmp_path / "models" / "t5-small")
    ready = defaults.spans_defaults(str(tmp_path / "models"))
    decoder_ready = weights.locate("gemma3-270m").status == "ready"
    assert ready == (["gemma3-270m"] if decoder_ready else []) + ["t5-small"]
    monkeypatch.setattr(weights, "locate", lambda *a, **k: SimpleNamespace(status="not present"))
    assert defaults.spans_defaults(str(tmp_path / "models")) == ["gemma3-270m"]  # it then says how to get it


def test_an_unusable_models_directory_still_gives_the_pages_their_defaults(monkeypatch) -> None:
    """A 5,000-character models folder typed on the Models page: Fill-mask and Spans still draw their first
    widget (their defaults look in that folder); nothing there is ready, and loading says why."""
    monkeypatch.delenv("EXPLORER_RESTRICT_PATHS", raising=False)
    bad = "y" * 5000
    assert defaults.fill_mask_defaults(bad) == ["gemma3-270m", "bert-base"]
    assert defaults.spans_defaults(bad) == ["gemma3-270m"]
    assert weights.ready_keys(("bert-base",), bad) == []


def test_only_lab_models_with_saved_exits_serve_early_exit(lab_exits) -> None:
    from explorer.tasks import defaults

    assert list(defaults.lab_models("exits", str(lab_exits))) == ["lab/mlm-tiny-20steps-seed0"]
    assert list(defaults.lab_models("any", str(lab_exits))) == ["lab/mlm-tiny-20steps-seed0"]
