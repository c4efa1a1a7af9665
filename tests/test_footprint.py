"""explorer.runtime.footprint: a request's models are taken while they fit its memory budget; the others are named."""

from __future__ import annotations

import pytest

from explorer.runtime import cancel, footprint, modelcache
from explorer.runtime.cancel import CancelToken, RequestBudget
from explorer.runtime.resolve import resolve
from explorer.tasks import fillmask
from explorer.tasks.fillmask import run

GB = 2**30


def test_estimate_reads_the_stored_parameter_counts() -> None:
    base, large = footprint.estimate(resolve("bert-base")), footprint.estimate(resolve("bert-large"))
    assert 0.4 * GB < base < 0.6 * GB and 1.3 * GB < large < 1.6 * GB  # ~110M / ~335M float32 parameters
    assert footprint.estimate(resolve("/no/such/dir/anywhere")) == 0 and footprint.estimate(resolve("not a key")) == 0


def test_a_directory_is_estimated_from_its_safetensors_headers(tmp_path) -> None:
    import torch
    from safetensors.torch import save_file

    save_file({"w": torch.zeros(1000, 250)}, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    assert footprint.estimate(resolve(str(tmp_path))) == int(250_000 * 4 * 1.1)


def test_outside_a_request_everything_is_kept() -> None:
    refs = [resolve("bert-base"), resolve("bert-large")]
    assert footprint.fit_request(refs, {}) == (["bert-base", "bert-large"], [], 0)


@pytest.fixture
def fake_fillers(monkeypatch) -> list[str]:
    ran: list[str] = []
    monkeypatch.setitem(run.FILLERS, "masked-lm", lambda ref, *a: ran.append(ref.spec) or ref.spec)
    modelcache.clear_cache()
    return ran


def test_the_shared_link_loads_what_fits_and_names_the_rest(fake_fillers) -> None:
    link = ["bert-base", "bert-large", "deberta-v2-xlarge", "electra-base"]  # ~0.4, 1.4, 3.6, 0.5 GB
    token = CancelToken(RequestBudget(60.0, int(2.6 * GB), "a test budget"), memory=lambda: 0)
    with cancel.scope(token):
        result = fillmask.fill_mask(link, "The capital of France is [MASK].")
    assert fake_fillers == ["bert-base", "bert-large", "electra-base"]  # in the order asked, while they fit
    assert result.skipped == ("deberta-v2-xlarge",)
    (spec, message), = result.errors
    assert spec == "deberta-v2-xlarge" and "deberta-v2-xlarge (~3.6 GB)" in message and "2.6 GB" in message
    assert "a test budget" in message and "command line" in message


def test_without_a_request_budget_every_model_runs(fake_fillers) -> None:
    result = fillmask.fill_mask(["bert-base", "deberta-v2-xlarge"], "A [MASK].")
    assert fake_fillers == ["bert-base", "deberta-v2-xlarge"] and result.skipped == () and result.errors == ()


def test_a_request_in_bfloat16_counts_half_the_bytes(fake_fillers) -> None:
    large = resolve("bert-large")
    assert abs(footprint.estimate(large, dtype="bfloat16") * 2 - footprint.estimate(large)) <= 2
    link = ["bert-base", "bert-large", "deberta-v2-xlarge"]  # ~0.4, 1.4, 3.6 GB in float32; half in bfloat16
    token = CancelToken(RequestBudget(60.0, int(3.0 * GB), "a test budget"), memory=lambda: 0)
    with cancel.scope(token):
        kept, dropped, _ = footprint.fit_request([resolve(k) for k in link], {}, dtype="bfloat16")
        assert kept == link and dropped == []  # 5.4 GB in float32 would not fit 3 GB; 2.7 GB does
        kept, dropped, _ = footprint.fit_request([resolve(k) for k in link], {}, dtype="float32")
        assert kept == ["bert-base", "bert-large"]
        result = fillmask.fill_mask(link, "The capital of France is [MASK].", dtype="bfloat16")
    assert fake_fillers == link and result.skipped == ()
