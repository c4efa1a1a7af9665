"""explorer.compression.methods: every method leaves the original untouched, does what its name says, and bad
input is an ExplorerError that says what to do."""

from __future__ import annotations

import hashlib

import pytest
import torch

from explorer.compression import measure, methods
from explorer.core.errors import ExplorerError
from explorer.runtime.resolve import resolve

ALL = ["fp32", "bf16", "int8", "prune-0", "prune-37", "prune-99", "heads-25", "heads-50"]


def _digest(model: torch.nn.Module) -> str:
    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def minilm(bundled_encoder):
    from explorer.runtime.loading import load_model

    torch.set_num_threads(2)
    return load_model(resolve("sentence-bert"), device="cpu", dtype="float32")


@pytest.mark.parametrize("name", ALL)
def test_the_cached_original_is_never_modified(minilm, name: str) -> None:
    before = _digest(minilm.model)
    ids = {id(p) for p in minilm.model.parameters()}
    out = methods.apply(minilm.model, methods.parse(name), "cpu")
    assert out is not minilm.model and not ids & {id(p) for p in out.parameters()}
    assert _digest(minilm.model) == before
    assert methods.sparsity(minilm.model) < 0.001


@pytest.mark.parametrize("percent", [0, 10, 50, 90, 99])
def test_pruning_reaches_the_sparsity_asked(minilm, percent: int) -> None:
    out = methods.apply(minilm.model, methods.parse(f"prune-{percent}"), "cpu")
    assert methods.sparsity(out) == pytest.approx(percent / 100, abs=0.002)  # rounding per layer
    for layer in methods.linear_layers(out).values():  # permanent: no mask buffers, no weight_orig
        assert not hasattr(layer, "weight_mask") and not hasattr(layer, "weight_orig")


def test_int8_is_smaller_and_bf16_is_half(minilm) -> None:
    base = measure.disk_bytes(minilm.model)
    q = methods.apply(minilm.model, methods.parse("int8"), "cpu")
    assert measure.disk_bytes(q) < 0.7 * base
    assert any("quantized.dynamic" in type(m).__module__ for m in q.modules())
    half = methods.apply(minilm.model, methods.parse("bf16"), "cpu")
    assert measure.disk_bytes(half) == pytest.approx(base / 2, rel=0.02)


def test_tied_output_heads_are_left_alone() -> None:
    from tests.tiny_gemma import tiny_gemma_config

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        from transformers import Gemma3ForCausalLM

        model = Gemma3ForCausalLM(tiny_gemma_config(300, 0)).eval()
    assert "lm_head" not in methods.linear_layers(model)  # it is the embedding table
    pruned = methods.apply(model, methods.parse("prune-50"), "cpu")
    assert pruned.lm_head.weight is pruned.model.embed_tokens.weight  # still tied
    q = methods.apply(model, methods.parse("int8"), "cpu")
    assert isinstance(q.lm_head, torch.nn.Linear) and q.lm_head.weight is q.model.embed_tokens.weight


@pytest.mark.parametrize("text, needle", [
    ("prune-100", "outside 0 to 99"),
    ("heads-250", "outside 0 to 99"),
    ("prune--5", "whole percentage"),
    ("prune-x", "whole percentage"),
    ("zip", "fp32, bf16, fp16, int8"),
    ("", "Unknown compression method"),
    ("<b>" + "x" * 500, "Unknown compression method"),
    ("exit-1.5", "outside 0 to 1"),
    ("exit-0.333", "steps of 0.01"),
    ("exit-", "speed from 0 to 1"),
    ("exit-fast", "speed from 0 to 1"),
])
def test_bad_names_say_what_to_do(text: str, needle: str) -> None:
    with pytest.raises(ExplorerError) as err:
        methods.parse(text)
    assert needle in str(err.value) and len(str(err.value)) < 300


def test_gpu_only_and_cpu_only_methods_are_refused_with_a_reason() -> None:
    assert "GPU only" in (methods.available(methods.parse("fp16"), "cpu") or "")
    assert "CPU only" in (methods.available(methods.parse("int8"), "cuda") or "")
    assert methods.available(methods.parse("bf16"), "cpu") is None
    with pytest.raises(ExplorerError, match="bf16"):
        methods.apply(torch.nn.Linear(2, 2), methods.parse("fp16"), "cpu")


def test_a_model_without_linear_layers_is_refused_before_a_copy() -> None:
    model = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.LayerNorm(4))
    for name in ("int8", "prune-50"):
        with pytest.raises(ExplorerError, match="no Linear"):
            methods.apply(model, methods.parse(name), "cpu")
    assert methods.apply(model, methods.parse("bf16"), "cpu")[0].weight.dtype == torch.bfloat16


def test_the_copy_is_refused_when_it_would_not_fit(monkeypatch, minilm) -> None:
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.01")
    with pytest.raises(ExplorerError, match="EXPLORER_MEMORY_CAP_GB"):
        methods.apply(minilm.model, methods.parse("int8"), "cpu")


def test_weight_only_without_torchao_says_how_to_get_it(monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torchao" else real(name, *a))
    for name in ("w8", "w4"):
        reason = methods.available(methods.parse(name), "cpu")
        assert reason and methods.TORCHAO_HINT in reason and name in reason
        with pytest.raises(ExplorerError, match="pip install torchao"):
            methods.apply(torch.nn.Linear(4, 4), methods.parse(name), "cpu")


def test_weight_only_shrinks_the_real_minilm_and_torchao_stays_quiet(bundled_encoder) -> None:
    """w8 and w4 for real, through the CLI in a process of its own (so torchao's import happens there and its
    import-time warnings would show): quality measured against the float32 original, and stderr clean
    (explorer.core.logs)."""
    import json
    import subprocess
    import sys

    from tests.conftest import ROOT

    out = subprocess.run([sys.executable, "-m", "explorer", "compress", "sentence-bert", "--method", "w8",
                          "--method", "w4", "--repeats", "1", "--json"], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    rows = {r["method"]: r for r in json.loads(out.stdout)}
    for name, floor in (("w8", 0.99), ("w4", 0.9)):
        r = rows[name]
        assert r["size_bytes"] < 0.7 * r["baseline_size_bytes"]  # the Linear weights are 8-bit (w4: int4 kept in int8)
        assert floor < r["quality"]["value"] <= 1.0 and r["quality"]["metric"] == "cosine agreement"
    assert rows["w4"]["quality"]["value"] < rows["w8"]["quality"]["value"]  # fewer bits, further from fp32
    assert "Failed to load" not in out.stderr and "register_constant" not in out.stderr, out.stderr


def test_mheads_parses_like_heads() -> None:
    m = methods.parse("MHEADS-25")
    assert (m.name, m.kind, m.amount) == ("mheads-25", "mheads", 25) and "mheads-N" in methods.valid_names()
    with pytest.raises(ExplorerError, match="outside 0 to 99"):
        methods.parse("mheads-100")


def test_exit_speeds_parse_to_hundredths() -> None:
    assert [methods.parse(f"exit-0.{i:02d}").amount for i in range(100)] == list(range(100))
    m = methods.parse(" EXIT-.5 ")
    assert (m.name, m.kind, m.speed) == ("exit-0.5", "exit", 0.5) and methods.available(m, "cpu") is None
