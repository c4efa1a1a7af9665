"""explorer.compression.measure: bytes on disk and in memory agree with the tensors; timings are medians of
the asked repeats, alternated for pairs (no timing values asserted)."""

from __future__ import annotations

import warnings

import torch

from explorer.compression import measure


def test_memory_counts_each_tensor_once_even_when_tied() -> None:
    emb = torch.nn.Embedding(10, 4)
    head = torch.nn.Linear(4, 10, bias=False)
    head.weight = emb.weight
    model = torch.nn.ModuleDict({"emb": emb, "head": head})
    assert measure.memory_bytes(model) == 10 * 4 * 4


def test_disk_size_follows_the_dtype_and_the_file_is_removed(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    big = torch.nn.Linear(256, 256)
    f32, bf16 = measure.disk_bytes(big), measure.disk_bytes(big.to(torch.bfloat16))
    assert f32 > 256 * 256 * 4 and abs(bf16 - f32 / 2) < 4096
    assert list(tmp_path.iterdir()) == []


def test_int8_packed_weights_are_counted_at_one_byte() -> None:
    from torch.ao.quantization import quantize_dynamic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = quantize_dynamic(torch.nn.Sequential(torch.nn.Linear(64, 64)), {torch.nn.Linear}, dtype=torch.qint8)
    assert 64 * 64 <= measure.memory_bytes(q) < 64 * 64 + 64 * 4 + 64


def test_time_call_runs_warmup_plus_repeats() -> None:
    calls = []
    t = measure.time_call(lambda: calls.append(1), items=8, warmup=2, repeats=3)
    assert len(calls) == 5 and t.repeats == 3 and t.latency_ms >= 0 and t.throughput > 0


def test_time_pair_alternates() -> None:
    order: list[str] = []
    a, b = measure.time_pair(lambda: order.append("a"), lambda: order.append("b"), items=1, warmup=1, repeats=2)
    assert order == ["a", "b"] * 3 and a.repeats == b.repeats == 2
