"""Evaluate page (AppTest): the bundled task scored by Gemma on opening, uploads checked line by line, slices,
perplexity, and the projector (real MiniLM embeddings, coloured by a field, neighbours of a typed sentence)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.evaluation import bundled, run
from explorer.evaluation.scorer import scorer_for
from explorer.runtime.resolve import resolve
from tests.pages.conftest import assert_clean, figures, page_app, plotly_array, shown
from tests.tiny_gemma import save_tiny_gemma

HOSTILE = "<script>alert('x')</script> **bold** $x^2$ 🙂 مرحبا"
GOOD = [{"context": "The sky is", "choices": ["blue", "green"], "answer": 0, "level": "easy"},
        {"context": HOSTILE, "choices": ["[link](x)", "<b>b</b>"], "answer": 1, "level": "hard"},
        {"context": "Grass is", "choices": ["red", "green"], "answer": 1, "level": "easy"}]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(save_tiny_gemma(tmp_path_factory.mktemp("tiny-page")))


def _tiny_app(tiny: str, **query: str):
    """The page with no bundled model picked and the tiny Gemma typed as a directory (fast)."""
    at = page_app("evaluate.py", **query)
    at.session_state["eval_models"] = []
    at.session_state["eval_models_dir"] = tiny
    at.session_state["eval_ppl_models"] = []
    at.session_state["eval_ppl_models_dir"] = tiny
    return at


def _jsonl(rows: list[dict]) -> bytes:
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode()


@pytest.mark.slow
def test_the_page_opens_on_the_bundled_task_scored_by_gemma(bundled_decoder, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_REQUEST_SECONDS", "600")  # a busy test machine must not cut the 26 examples
    at = page_app("evaluate.py", timeout=900).run()
    assert_clean(at)
    summary = at.dataframe[0].value
    assert list(summary["model"]) == ["gemma3-270m"] and summary["scored"][0] == "26 of 26"
    rows = at.dataframe[1].value
    assert len(rows) == 26 and rows["gemma3-270m: right"].mean() == pytest.approx(summary["accuracy"][0], abs=1e-4)
    first = run.score_task(scorer_for(resolve("gemma3-270m"), device="cpu"),
                           bundled.task("multiple_choice").head(2))
    by_line = {int(r["line"]): r["gemma3-270m: scores"] for _, r in rows.iterrows()}
    for ex in first.examples:
        assert by_line[ex.index + 1] == " ".join(f"{v:.3f}" for v in ex.scores)
    acc = figures(at)[0]
    assert acc["data"][0]["name"] == "accuracy" and acc["data"][0]["error_y"]["type"] == "data"
    slices = at.dataframe[2].value
    assert set(slices["topic"]) == {"science", "geography", "everyday", "language"}


def test_a_bad_upload_is_one_box_naming_the_line(tiny) -> None:
    at = _tiny_app(tiny, task="upload").run()
    assert_clean(at)
    at.file_uploader(key="eval_upload").upload("bad.jsonl", _jsonl(GOOD[:1]) + b"\n{\"context\": 1}\n").run()
    assert_clean(at, errors_expected=True)
    assert len(at.error) == 1 and "Line 2 of bad.jsonl" in shown(at.error)[0]
    assert not figures(at)


@pytest.mark.parametrize("data, needle", [
    ("\n".join(json.dumps(GOOD[0]) for _ in range(2)).encode("utf-16"), "UTF-16"),
    (b"\x00\x01binary\x00", "binary"),
    (_jsonl([{**GOOD[0], "answer": 5}]), "out of range"),
    (_jsonl([{**GOOD[0], "choices": []}]), "0 choices"),
], ids=["utf16", "binary", "range", "no-choices"])
def test_each_kind_of_bad_upload_is_said_before_any_scoring(tiny, data: bytes, needle: str) -> None:
    at = _tiny_app(tiny, task="upload").run()
    at.file_uploader(key="eval_upload").upload("mine.jsonl", data).run()
    assert_clean(at, errors_expected=True)
    assert len(at.error) == 1 and needle in shown(at.error)[0] and not figures(at)


def test_a_good_upload_is_scored_sliced_by_its_field_and_shown_as_text(tiny) -> None:
    at = _tiny_app(tiny, task="upload").run()
    at.file_uploader(key="eval_upload").upload("mine.jsonl", _jsonl(GOOD)).run()
    assert_clean(at)
    rows = at.dataframe[1].value
    assert HOSTILE in list(rows["context"]) and len(rows) == 3  # user text shown as text, in a table
    assert at.selectbox(key="eval_slice").options == ["level", "context length"]
    assert set(at.dataframe[2].value["level"]) == {"easy", "hard"}
    at.selectbox(key="eval_slice").set_value("context length").run()
    assert_clean(at)
    assert at.query_params["slice"] == "context length"


def test_the_perplexity_tab_scores_a_typed_text(tiny) -> None:
    at = _tiny_app(tiny, eval_view="Perplexity").run()
    assert_clean(at)
    at.text_area(key="eval_text").set_value(HOSTILE * 3).run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert table["windows"][0] == "1 of 1" and table["tokens"][0] > 10
    assert "loglikelihood_rolling" in table["scored by"][0]
    said = [m for m in shown(at.info) if m.startswith("Perplexity of")]  # the cost, said before the work
    assert said and f"{table['tokens'][0]:,} tokens in 1 window(s)" in said[0]
    at.text_area(key="eval_text").set_value("   ").run()
    assert_clean(at, errors_expected=True)
    assert "empty" in shown(at.error)[0]


def test_a_text_past_the_pages_time_is_scored_as_far_as_it_fits_and_said(tiny, monkeypatch) -> None:
    """No time left after the first window (the budget counted, not the machine's speed): one window of the
    text's several is scored, and the page says so before and after."""
    from app.caches import evaluation as cache

    monkeypatch.setattr(cache, "_budget", lambda: 0.0)
    at = _tiny_app(tiny, eval_view="Perplexity")
    at.session_state["eval_text"] = bundled.text() * 4  # several of the tiny model's 256-token windows
    at.run()
    assert_clean(at)
    windows = at.dataframe[0].value["windows"][0]
    assert windows.startswith("1 of ") and windows != "1 of 1"
    warned = shown(at.warning)
    assert any("more than the 0 s" in w and "continues from there" in w for w in warned)  # before the work
    assert any("within this page's 0 s" in w for w in warned)  # and after it


def test_the_projector_draws_minilm_embeddings_coloured_by_a_field_with_neighbours(bundled_encoder) -> None:
    at = page_app("evaluate.py", eval_view="Embedding projector").run()
    assert_clean(at)
    fig = figures(at)[0]
    names = {t["name"] for t in fig["data"]}
    assert {"science", "geography", "everyday", "language"} <= names  # coloured by topic
    assert all(t["type"] == "scattergl" for t in fig["data"])  # WebGL
    assert sum(len(plotly_array(t["x"])) for t in fig["data"] if t["name"] != "nearest to the query") == 26
    near = at.dataframe[0].value
    assert "spider" in near["text"][0] and near["rank"][0] == 1  # "Which animal has eight legs?"
    again = page_app("evaluate.py", eval_view="Embedding projector").run()
    assert np.array_equal(plotly_array(figures(again)[0]["data"][0]["x"]), plotly_array(fig["data"][0]["x"]))


def test_projector_settings_live_in_the_url_and_bad_lines_are_refused() -> None:
    at = page_app("evaluate.py", eval_view="Embedding projector", texts="lines", method="pca", dims="3").run()
    assert_clean(at)
    fig = figures(at)[0]
    assert fig["data"][0]["type"] == "scatter3d" and at.query_params["dims"] == "3"
    at.selectbox(key="eval_colour").set_value("none").run()
    at.toggle(key="eval_tokens").set_value(True).run()
    assert_clean(at)
    assert at.query_params["tokens"] == "1" and sum(len(plotly_array(t["x"])) for t in figures(at)[0]["data"]) > 30
    at.text_area(key="eval_proj_lines").set_value("x" * 20_001).run()
    assert_clean(at, errors_expected=True)
    assert "at most 20,000" in shown(at.error)[0]


def test_a_served_column_scores_what_fits_in_the_budget_beside_the_local_model(tiny, served_engine,
                                                                                monkeypatch) -> None:
    """The real engine configured by the operator: picked by default, scored part by part until the parts' budget
    is spent, what was cut said, the rows it did not reach marked as not scored. The budget is counted in parts, not
    seconds (a faster machine once scored all 22 rows within 15 s): with none left after the first part, exactly
    that part (``SERVED_PART`` rows) is scored, whatever the machine's speed; each part's own request keeps a
    budget it cannot run out of."""
    from app.caches import evaluation as cache
    from explorer.evaluation.scorer import SERVED_PART

    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", served_engine.endpoint.base_url)
    monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", "gemma-engine")
    monkeypatch.setenv("EXPLORER_REQUEST_SECONDS", "600")
    monkeypatch.setattr(cache, "_budget", lambda: 0.0)
    at = _tiny_app(tiny, task="cloze").run()
    assert_clean(at)
    summary = at.dataframe[0].value
    assert list(summary["model"]) == [tiny, "served:gemma-engine"]
    scored = int(summary["scored"][1].split(" of ")[0])
    assert scored == SERVED_PART and summary["ran on"][1].startswith("llama-cpp-python")
    assert any("scored" in w and "of 22 examples" in w for w in shown(at.warning))
    rows = at.dataframe[1].value
    assert rows["served:gemma-engine: choice"].isna().sum() == 22 - scored


def test_a_projection_cut_by_its_budget_says_so_and_the_next_run_completes_it(monkeypatch) -> None:
    lines = "\n".join(f"Sentence number {i} is about topic {i % 7}." for i in range(200))
    from app.caches import evaluation as cache

    # the parts together may take no time at all: the first part of 128 is kept (each part's own request still
    # has the server's whole budget, so it is not stopped inside)
    monkeypatch.setattr(cache, "_budget", lambda: 0.0)
    at = page_app("evaluate.py", eval_view="Embedding projector", texts="lines", method="pca")
    at.session_state["eval_proj_lines"] = lines
    at.run()
    assert_clean(at)
    assert any("128 of 200 texts embedded" in w and "Run it again" in w for w in shown(at.warning))
    assert sum(len(plotly_array(t["x"])) for t in figures(at)[0]["data"] if t["name"] != "nearest to the query") == 128
    monkeypatch.setattr(cache, "_budget", lambda: 600.0)
    at.run()  # the first part answers from the cache; the rest are embedded now
    assert_clean(at)
    assert not any("texts embedded" in w for w in shown(at.warning))
    assert sum(len(plotly_array(t["x"])) for t in figures(at)[0]["data"] if t["name"] != "nearest to the query") == 200
