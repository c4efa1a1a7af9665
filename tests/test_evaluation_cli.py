"""``python -m explorer evaluate`` and ``project``: the JSON shapes the issue names, the same numbers as the
library, and every bad input one line on stderr with exit 2 before a model loads."""

from __future__ import annotations

import json

import pytest

from explorer.cli import main
from explorer.evaluation import bundled, perplexity, run, taskfile
from explorer.evaluation.scorer import local_scorer
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve
from tests.tiny_gemma import save_tiny_gemma

GOOD = '{"context": "The sky is", "choices": ["blue", "green", "loud"], "answer": 0, "topic": "colour"}\n'


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_gemma(tmp_path_factory.mktemp("tiny-cli"))


@pytest.fixture
def no_model(monkeypatch):
    """A bad input must be refused before any model loads."""
    from explorer.runtime import loading

    monkeypatch.setattr(loading, "_load_uncached", lambda *a, **k: pytest.fail("a model was loaded"))


def _json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_evaluate_prints_the_issues_shape_with_the_librarys_numbers(tiny, tmp_path, capsys) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(GOOD * 2 + GOOD.replace('"answer": 0', '"answer": 2'), encoding="utf-8")
    out = _json(capsys, ["evaluate", "--model", str(tiny), "--task", str(path), "--json", "--device", "cpu"])
    assert {"model", "accuracy", "examples"} <= set(out) and out["kind"] == "choice"
    assert set(out["examples"][0]) >= {"index", "choice", "correct", "scores"}
    scorer = local_scorer(load_model(resolve(str(tiny)), "causal-lm", device="cpu"))
    want = run.score_task(scorer, taskfile.read_task(path))
    assert [e["scores"] for e in out["examples"]] == [[round(v, 6) for v in e.scores] for e in want.examples]
    right = [e["choice"] == a for e, a in zip(out["examples"], (0, 0, 2), strict=True)]
    assert out["accuracy"] == pytest.approx(sum(right) / 3, abs=1e-6)
    assert out["interval"][0] <= out["accuracy"] <= out["interval"][1]
    assert set(out["metrics"]) == {"acc", "acc_norm", "brier_score", "perplexity"}  # every metric of the kind
    assert out["metrics"]["acc"]["value"] == out["accuracy"] and 0 <= out["metrics"]["brier_score"]["value"] <= 2


def test_evaluate_limit_and_the_text_table(tiny, capsys) -> None:
    cloze = str(bundled.path("cloze"))
    assert main(["evaluate", "--model", str(tiny), "--task", cloze, "--limit", "2", "--device", "cpu"]) == 0
    text = capsys.readouterr().out
    assert "2 of 2 examples" in text and "scored by summed log-likelihood" in text


def test_evaluate_perplexity_prints_perplexity_and_tokens(tiny, capsys) -> None:
    text_file = str(bundled.path("perplexity"))
    out = _json(capsys, ["evaluate", "--model", str(tiny), "--text-file", text_file, "--metric", "perplexity",
                         "--window", "64", "--json", "--device", "cpu"])
    scorer = local_scorer(load_model(resolve(str(tiny)), "causal-lm", device="cpu"))
    want = perplexity.perplexity(scorer, bundled.text(), 64)
    assert {"model", "perplexity", "tokens"} <= set(out)
    assert out["perplexity"] == pytest.approx(want.perplexity) and out["tokens"] == want.tokens
    assert out["windows"] == want.windows > 1


def test_project_prints_points_per_line(capsys) -> None:
    texts = str(bundled.path("sentences"))
    out = _json(capsys, ["project", "--model", "sentence-bert", "--text-file", texts, "--method", "pca", "--json"])
    assert {"model", "method", "points"} <= set(out) and out["method"] == "pca"
    assert len(out["points"]) == 30 and all(len(p) == 2 for p in out["points"])
    three = _json(capsys, ["project", "--model", "sentence-bert", "--text-file", texts, "--dims", "3", "--layer",
                           "2", "--tokens", "--json"])
    assert len(three["points"][0]) == 3 and len(three["points"]) > 30 and three["layer"] == 2


@pytest.mark.parametrize("argv, needle", [
    (["evaluate", "--model", "gemma3-270m", "--task", "{bad}"], "Line 2 of bad.jsonl is not valid JSON"),
    (["evaluate", "--model", "gemma3-270m", "--task", "{range}"], "answer 9 is out of range"),
    (["evaluate", "--model", "gemma3-270m", "--task", "{utf16}"], "UTF-16"),
    (["evaluate", "--model", "gemma3-270m", "--task", "{binary}"], "binary"),
    (["evaluate", "--model", "gemma3-270m", "--task", "{missing}"], "Cannot read"),
    (["evaluate", "--model", "gemma3-270m", "--task", "{dir}"], "is a directory"),
    (["evaluate", "--model", "gemma3-270m", "--text-file", "{long}", "--metric", "perplexity"],
     "at most 200,000"),
    (["evaluate", "--model", "gemma3-270m", "--task", "{range}", "--metric", "perplexity"], "give --text-file"),
    (["evaluate", "--model", "gemma3-270m", "--text-file", "{long}", "--metric", "accuracy"], "measures perplexity"),
    (["project", "--model", "sentence-bert", "--text-file", "{empty}"], "holds no text"),
    (["project", "--model", "sentence-bert", "--text-file", "{long}", "--method", "mds"], "invalid choice"),
], ids=["json", "range", "utf16", "binary", "missing", "dir", "long", "task-ppl", "text-acc", "empty", "method"])
def test_bad_input_is_one_line_and_exit_2_before_a_model_loads(argv, needle, tmp_path, capsys, no_model) -> None:
    files = {"bad": "bad.jsonl", "range": "range.jsonl", "utf16": "u16.jsonl", "binary": "bin.jsonl",
             "missing": "nope.jsonl", "dir": "", "long": "long.txt", "empty": "empty.txt"}
    (tmp_path / "bad.jsonl").write_text(GOOD + '{"context": "x", "choices": ["a", "b"]\n', encoding="utf-8")
    (tmp_path / "range.jsonl").write_text(GOOD.replace('"answer": 0', '"answer": 9'), encoding="utf-8")
    (tmp_path / "u16.jsonl").write_bytes(GOOD.encode("utf-16"))
    (tmp_path / "bin.jsonl").write_bytes(b"\x00\x01\x02PK\x03\x04" * 20)
    (tmp_path / "long.txt").write_text("word " * 40_001, encoding="utf-8")
    (tmp_path / "empty.txt").write_text("\n \n", encoding="utf-8")
    args = [a.format(**{k: str(tmp_path / v) for k, v in files.items()}) for a in argv]
    code = main(args) if "mds" not in argv else pytest.raises(SystemExit, main, args).value.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1 and "Traceback" not in err
