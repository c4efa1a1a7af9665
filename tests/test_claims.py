"""The claims table: rows from a fake measurement, the JSON the benchmark writes, missing families reported."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.papers import claims
from explorer.training import downstream, lossfamilies, measurement
from explorer.training.downstream import ProbeSpec
from explorer.training.figures import Measurement, VariantRun

KEYS = ["electra", "albert", "distilbert", "roberta"]


def _variant(objective: str, *, params: int = 1_500_000, loss: float = 6.0, mlm: float | None = 6.0,
             probe_score: float | None = 0.7, steps: int = 150) -> VariantRun:
    return VariantRun(objective, objective, steps, params, steps * 2048, 1e12, 60.0, 0.25, 9.0, loss, mlm,
                   probe_score, None if probe_score is None else 0.02)


def fake(**changes) -> Measurement:
    """A measurement in which every claim holds (each test changes what it needs)."""
    variants = {"mlm": _variant("mlm", probe_score=0.62), "bert": _variant("bert", mlm=6.3),
                "roberta": _variant("roberta", mlm=5.9), "albert": _variant("albert", params=800_000, mlm=6.4),
                "electra": _variant("electra", loss=20.0, mlm=None, probe_score=0.80, steps=70),
                "distilbert": _variant("distilbert", params=1_000_000, probe_score=0.60)}
    base = Measurement("2025-01-01", "tiny", 150, 0, 2048, 128, "cpu", "test machine", ProbeSpec().to_dict(),
                       variants, {"mlm": 0.52, "electra": 0.51, "distilbert": 0.50}, {},
                       {"teacher_ms": 2.0, "student_ms": 1.2, "ratio": 1.67}, 0.62, 1.0)
    return replace(base, **changes)


def rows(m: Measurement) -> dict[str, claims.Claim]:
    return {r.key: r for r in claims.table(m)}


def test_every_claim_has_a_row_with_the_papers_figures_and_its_source():
    table = claims.table(fake())
    assert [r.key for r in table] == KEYS
    for r in table:
        assert r.verdict in claims.VERDICTS and r.why and r.measured != "-"
        assert any(ch.isdigit() for ch in r.paper) and "Table" in r.source
    got = rows(fake())
    assert "79.9" in got["electra"].paper and "75.1" in got["electra"].paper  # Clark et al. 2020, Table 1
    assert "12M vs 108M" in got["albert"].paper  # Lan et al. 2020, Table 2
    assert "96.9%" in got["distilbert"].paper and "1.63x" in got["distilbert"].paper  # Sanh et al. 2019, Tables 1, 3


def test_verdicts_follow_the_numbers():
    assert {k: r.verdict for k, r in rows(fake()).items()} == dict.fromkeys(KEYS, "reproduced")
    worse = fake(variants={**fake().variants, "electra": _variant("electra", mlm=None, probe_score=0.50)})
    assert rows(worse)["electra"].verdict == "not reproduced"
    close = fake(variants={**fake().variants, "electra": _variant("electra", mlm=None, probe_score=0.63)})
    assert rows(close)["electra"].verdict == "not measurable at this size"  # within two standard errors
    nothing = fake(floors={"mlm": 0.62, "electra": 0.80, "distilbert": 0.6})
    assert rows(nothing)["electra"].verdict == "not measurable at this size"  # neither beats its floor
    costly = fake(variants={**fake().variants, "albert": _variant("albert", params=800_000, mlm=7.5)})
    assert rows(costly)["albert"].verdict == "not reproduced"
    untrained = fake(variants={**fake().variants, "albert": _variant("albert", params=800_000, loss=8.95)})
    assert rows(untrained)["albert"].verdict == "not measurable at this size"
    slow = fake(speed={"teacher_ms": 1.0, "student_ms": 1.1, "ratio": 0.91})
    assert rows(slow)["distilbert"].verdict == "not reproduced"
    assert "dynamic and static masking drew the same corruption" in rows(fake())["roberta"].why  # 0.25 epochs


def test_missing_families_are_reported_not_crashed():
    variants = {k: v for k, v in fake().variants.items() if k not in ("electra", "distilbert")}
    m = fake(variants=variants, missing={"electra": "electra", "distilbert": "distill"}, speed=None, teacher_probe=None)
    got = rows(m)
    assert got["electra"].verdict == "not measured" and "electra family" in got["electra"].why
    assert got["distilbert"].verdict == "not measured" and "distill family" in got["distilbert"].why
    assert got["albert"].verdict == "reproduced"
    assert "needs the electra family" in claims.markdown(claims.report(m))


def test_the_written_json_has_every_row_and_loads_back(tmp_path):
    rep = claims.report(fake())
    json_path, md_path = claims.write(rep, tmp_path / "pretraining_claims.json")
    data = json.loads(json_path.read_text())
    assert [r["key"] for r in data["rows"]] == KEYS
    assert {"claim", "paper", "source", "measured", "verdict", "why"} <= set(data["rows"][0])
    assert claims.load(json_path).measurement == rep.measurement
    assert md_path.read_text().count("\n| ") == len(KEYS) + 1  # header + one line per claim
    assert claims.stamp(json_path) > 0 and claims.stamp(tmp_path / "none.json") == -1


def test_missing_or_broken_results_say_how_to_make_them(tmp_path):
    with pytest.raises(ExplorerError, match="pretrain_claims.py"):
        claims.load(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"measurement": {"date": 1}}')
    with pytest.raises(ExplorerError, match="not a claims measurement"):
        claims.load(bad)


def test_the_committed_results_have_every_claim_row():
    rep = claims.load()
    assert [r.key for r in rep.rows] == KEYS
    assert rep.measurement.budget_steps >= 1 and rep.measurement.date
    data = json.loads(claims.RESULTS_JSON.read_text())
    assert [r["key"] for r in data["rows"]] == KEYS


def test_measure_reports_a_family_that_has_not_landed(monkeypatch):
    from explorer.training import corpus

    nouns = ["list", "value", "module", "function", "string", "file", "class", "method", "object", "number"]
    verbs = ["reads", "writes", "sorts", "copies", "opens", "closes", "raises", "holds", "prints"]
    text = corpus.from_text("\n".join(f"### d{d}\n" + "\n".join(f"the {n} {v} the {m} in part {d} now ."
                                                                  for n in nouns[:6]
                                                                  for v in verbs[d % 5:d % 5 + 4] for m in nouns[6:10])
                                      for d in range(40)), "tiny")
    monkeypatch.setattr(lossfamilies, "FAMILIES", {"mlm": lossfamilies.FAMILIES["mlm"]})
    spec = ProbeSpec(steps=2, batch=4, seq_len=32, test_examples=8)
    m = measurement.measure(2, 0, objectives=("mlm", "electra"), batch_tokens=128, seq_len=32, spec=spec, text=text)
    assert m.missing == {"electra": "electra"} and set(m.variants) == {"mlm"}
    assert m.variants["mlm"].steps == 2 and m.variants["mlm"].probe is not None and "mlm" in m.floors
    assert m.variants["mlm"].heldout_mlm_loss is not None
    assert rows(m)["electra"].verdict == "not measured"
    assert Measurement.from_dict(json.loads(json.dumps(m.to_dict()))) == m


def test_student_and_teacher_are_timed_in_the_same_run():
    from transformers import BertConfig, BertForMaskedLM

    def bert(layers: int) -> BertForMaskedLM:
        return BertForMaskedLM(BertConfig(vocab_size=8192, hidden_size=32, num_hidden_layers=layers,
                                          num_attention_heads=2, intermediate_size=64))

    timing = measurement._speed(bert(2), bert(1), seq_len=16)
    assert timing["teacher_ms"] > 0 and timing["student_ms"] > 0
    assert timing["ratio"] == pytest.approx(timing["teacher_ms"] / timing["student_ms"], rel=1e-2)
    assert torch.get_num_threads() >= 1 and downstream.MAJORITY == 0.5
