"""explorer.compression.study: one model through several methods; the original is measured once per study (and once
for the page's per-method caches), the result's invariants and ratios, its JSON, a request out of time keeps what was
measured, bad input fails before any model loads, and the decoder path on a tiny Gemma."""

from __future__ import annotations

import json

import pytest
import torch

from explorer.compression import quality, study
from explorer.core import limits
from explorer.core.errors import ExplorerError
from explorer.runtime import cancel
from explorer.runtime.resolve import resolve


@pytest.fixture(scope="module")
def minilm_study() -> study.Study:
    torch.set_num_threads(2)
    return study.run("sentence-bert", ["int8", "prune-50", "int8"], device="cpu", repeats=2)


def test_rows_and_invariants(minilm_study) -> None:
    s = minilm_study
    assert [r.method for r in s.rows] == ["int8", "prune-50"]  # a repeated method runs once
    assert s.baseline.method == "original" and s.baseline.quality.value == pytest.approx(1.0, abs=1e-5)
    int8, pruned = s.rows
    assert int8.size_bytes < s.baseline.size_bytes and pruned.size_bytes == s.baseline.size_bytes
    assert pruned.sparsity == pytest.approx(0.5, abs=0.002)
    assert all(r.latency_ms > 0 and r.baseline_latency_ms > 0 and r.answer for r in s.rows)
    assert any("dense" in n.text for n in s.notices) and not any("Q4_K_M" in n.text for n in s.notices)


def test_json_round_trips(minilm_study) -> None:
    data = json.loads(json.dumps(minilm_study.to_dict()))
    assert data["baseline"]["method"] == "original" and len(data["rows"]) == 2
    rec = minilm_study.records()[0]
    assert {"model", "method", "size_bytes", "baseline_size_bytes", "latency_ms", "baseline_latency_ms", "quality",
            "device"} <= set(rec)
    assert {"metric", "value", "baseline_value"} <= set(rec["quality"])


def test_the_ratios_are_the_studys_own(minilm_study) -> None:
    s = minilm_study
    assert len(s.ratios) == len(s.rows)
    for r, x in zip(s.rows, s.ratios, strict=True):
        assert x.size == pytest.approx(r.size_bytes / s.baseline.size_bytes)
        assert x.latency == pytest.approx(r.latency_ms / r.baseline_latency_ms)
        assert x.quality == pytest.approx(r.quality.value / r.quality.baseline_value)
    assert s.ratios[0].size < 1 and s.ratios[1].size == pytest.approx(1.0)  # int8 shrinks; prune's zeros do not


def _counting(monkeypatch) -> list[str]:
    """Every measurement of an original (its reference outputs), counted."""
    seen: list[str] = []
    real = quality.reference

    def counted(model, tokenizer, decoder, device):
        seen.append(type(model).__name__)
        return real(model, tokenizer, decoder, device)

    monkeypatch.setattr(quality, "reference", counted)
    return seen


def test_the_original_is_measured_once_for_every_method(monkeypatch) -> None:
    originals = _counting(monkeypatch)
    timed_alone = []
    real_time_call = study.measure.time_call
    monkeypatch.setattr(study.measure, "time_call", lambda *a, **k: timed_alone.append(1) or real_time_call(*a, **k))
    s = study.run("sentence-bert", ["bf16", "prune-20", "heads-25"], device="cpu", repeats=1)
    assert [r.method for r in s.rows] == ["bf16", "prune-20", "heads-25"]
    assert len(originals) == 1 and len(timed_alone) == 1  # each copy is timed beside it (time_pair), not it alone


def test_the_pages_caches_measure_the_original_once_across_runs(monkeypatch) -> None:
    """The page hands its caches to run (app/caches/compression.py): asking again with one more method measures
    only that method, against the original measured the first time, and the model is resolved (found on disk, its
    kind read) once: every method's copy loads from the baseline's ref."""
    from explorer.runtime import modelkind, weights

    originals = _counting(monkeypatch)
    looked: list[str] = []
    for module, name in ((weights, "locate"), (modelkind, "family_of")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _r=real, _n=name, **k: looked.append(_n) or _r(*a, **k))
    bases: dict[study.Settings, study.Baseline] = {}
    rows: dict[tuple[study.Settings, str], study.Row] = {}
    measured: list[str] = []

    def original(wanted: study.Settings) -> study.Baseline:
        if wanted not in bases:
            bases[wanted] = study.baseline(wanted)
        return bases[wanted]

    def one_method(wanted: study.Settings, name: str) -> study.Row:
        if (wanted, name) not in rows:
            measured.append(name)
            rows[wanted, name] = study.method_row(original(wanted), name)
        return rows[wanted, name]

    steps: list[str] = []
    first = study.run("sentence-bert", ["bf16"], device="cpu", repeats=1, original=original, one_method=one_method)
    again = study.run("sentence-bert", ["bf16", "prune-20"], device="cpu", repeats=1, original=original,
                      one_method=one_method, progress=lambda _f, text: steps.append(text))
    assert len(originals) == 1 and measured == ["bf16", "prune-20"]
    assert sorted(looked) == ["family_of", "locate"]
    assert again.baseline == first.baseline and again.rows[0] == first.rows[0]
    assert [t for t in steps if t.endswith("measuring it…")] == ["bf16: compressing a copy and measuring it…",
                                                                 "prune-20: compressing a copy and measuring it…"]
    assert any("dense" in n.text for n in again.notices) and not any("dense" in n.text for n in first.notices)


@pytest.mark.parametrize("names, needle", [([], "No compression method"), (["int8", "zap"], "Unknown"),
                                           (["fp16"], "GPU only"), (["prune-5"] * 13, "at most")])
def test_bad_input_fails_before_a_model_loads(monkeypatch, names, needle) -> None:
    monkeypatch.setattr(study, "load_model", lambda *a, **k: pytest.fail("loaded a model"))
    with pytest.raises(ExplorerError, match=needle):
        study.run("sentence-bert", names, device="cpu")


def test_a_request_out_of_time_keeps_the_methods_measured(monkeypatch, minilm_study) -> None:
    calls = []

    def check() -> None:
        calls.append(1)
        if len(calls) == 2:  # before the second method
            raise cancel.RequestStopped("This request was stopped after 61 s.", "time")

    monkeypatch.setattr(cancel, "check", check)
    s = study.run("sentence-bert", ["bf16", "int8"], device="cpu", repeats=1)
    assert [r.method for r in s.rows] == ["bf16"]
    assert any(n.kind == "stopped" and "1 of 2" in n.text for n in s.notices)
    calls.clear()
    monkeypatch.setattr(cancel, "check", lambda: (_ for _ in ()).throw(cancel.RequestStopped("gone", "gone")))
    with pytest.raises(cancel.RequestStopped):
        study.run("sentence-bert", ["bf16"], device="cpu", repeats=1)


def test_decoder_study_on_a_tiny_gemma(tmp_path) -> None:
    from tests.tiny_gemma import save_tiny_gemma

    path = save_tiny_gemma(tmp_path / "g")
    s = study.run(str(path), ["int8", "heads-50"], device="cpu", repeats=1, prompt="Once upon a time")
    assert s.decoder and s.throughput_unit == "tokens/s" and s.prompt == "Once upon a time"
    assert s.baseline.quality.metric == "perplexity"
    assert s.rows[0].quality.baseline_value == pytest.approx(s.baseline.quality.value)
    assert 0 <= s.rows[1].quality.extra["top1_agreement"] <= 1


def test_mheads_on_a_lab_encoder_uses_its_masked_lm_ranking(lab_exits, monkeypatch) -> None:
    """An encoder's mheads-N copy has exactly the heads its masked-LM model ranks lowest switched off."""
    from explorer.compression import heads, methods
    from explorer.runtime.loading import load_model

    key, folder = "lab/mlm-tiny-20steps-seed0", str(lab_exits)
    mlm = load_model(resolve(key, folder), "masked-lm", device="cpu", dtype="float32")
    expected = methods.masked_scores(mlm.model, mlm.tokenizer, "cpu")
    pruned: list = []
    real = heads.prune

    def spy(model, percent, ranked=None):  # the heads the copy loses, as pruned
        pruned.append(real(model, percent, ranked))
        return pruned[-1]

    monkeypatch.setattr(heads, "prune", spy)
    s = study.run(key, ["mheads-50"], device="cpu", models_dir=folder, repeats=1)
    assert [r.method for r in s.rows] == ["mheads-50"] and not s.decoder
    gone = pruned[0]
    assert [(g.head, g.score) for g in gone] == [(e.head, e.score) for e in expected[: len(expected) // 2]]
    assert 0 < s.rows[0].sparsity < 1 and -1 <= s.rows[0].quality.value <= 1


def test_mheads_on_a_sentence_encoder_says_to_pick_heads() -> None:
    with pytest.raises(ExplorerError, match="heads-N") as err:
        study.run("sentence-bert", ["mheads-25"], device="cpu", repeats=1)
    assert "masked-LM" in str(err.value)


@pytest.mark.parametrize(("prompt", "kind", "shown"), [
    ("", "fallback", study.DEFAULT_PROMPTS["encoder"]),
    ("<b>guitar</b> " * 2_000, "truncated", None),
])
def test_an_empty_or_huge_prompt_is_said_not_silent(prompt: str, kind: str, shown: str | None) -> None:
    s = study.run("sentence-bert", ["bf16"], device="cpu", repeats=1, prompt=prompt)
    assert [n.kind for n in s.notices if n.kind in ("fallback", "truncated")] == [kind]
    assert s.prompt == (shown or prompt.strip()[: limits.COMPRESSION_PROMPT_CHARS])
    assert s.rows[0].answer and s.baseline.answer  # the answers still come, on what was used
