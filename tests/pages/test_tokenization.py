"""Tokenizers page (AppTest): shown counts equal the library's, examples, selection, bad input."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer import tokenization as tk
from explorer.serving import backend

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "tokenization.py")


def _values(arr) -> list:
    """Plotly 7 sends numeric arrays either as lists or as {"dtype", "bdata"} (base64)."""
    if isinstance(arr, dict):
        return np.frombuffer(base64.b64decode(arr["bdata"]), dtype=arr["dtype"]).tolist()
    return list(arr)


@pytest.fixture()
def at() -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not app.exception, app.exception
    return app


def _counts_shown(app: AppTest) -> list[int]:
    return [int(m.value.split()[0].replace(",", "")) for m in app.metric]


def test_default_text_counts_chips_and_chart_match_the_library(at: AppTest) -> None:
    expected = tk.compare(tk.PRESETS["Rare words & misspellings"])
    assert _counts_shown(at) == [t.count for t in expected]
    chips = [h.proto.body for h in at.get("html")]
    assert len(chips) == len(expected)
    assert "##ern" in chips[0] and "␣la" in chips[2]  # subword marks of WordPiece and byte-level BPE
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert _values(spec["data"][0]["y"]) == [t.count - t.n_special for t in expected]
    assert at.get("download_button")
    assert not at.error


def test_example_and_tokenizer_choice_update_the_view(at: AppTest) -> None:
    at.selectbox(key="tok_preset").set_value("Emoji").run()
    assert at.text_area(key="tok_text").value == tk.PRESETS["Emoji"]
    assert _counts_shown(at) == [t.count for t in tk.compare(tk.PRESETS["Emoji"])]
    at.multiselect(key="tok_names").set_value(["gpt2", "t5"]).run()
    assert not at.exception
    assert [m.label for m in at.metric] == ["GPT-2 (byte-level BPE)", "T5 (SentencePiece)"]
    assert at.query_params["tokenizers"] == ["gpt2,t5"] or at.query_params["tokenizers"] == "gpt2,t5"


def test_no_tokenizer_chosen_says_what_to_do(at: AppTest) -> None:
    at.multiselect(key="tok_names").set_value([]).run()
    assert not at.exception
    assert "at least one tokenizer" in at.error[0].value


@pytest.mark.parametrize("text", ["", "   \n\t  "])
def test_empty_text_gives_a_clear_message(at: AppTest, text: str) -> None:
    at.text_area(key="tok_text").set_value(text).run()
    assert not at.exception
    assert "empty" in at.error[0].value
    assert not at.get("html")


def test_fifty_thousand_characters_are_counted_in_full_but_drawn_in_part(at: AppTest) -> None:
    text = ("Long documents get truncated by every model. " * 1200)[:50_000]
    at.text_area(key="tok_text").set_value(text).run()
    assert not at.exception
    expected = tk.compare(text)
    assert _counts_shown(at) == [t.count for t in expected]
    assert any("only the first" in i.value for i in at.info)
    assert len(at.warning) == len(expected)  # every model would cut this text
    assert "✂" in at.get("html")[0].proto.body


def test_html_emoji_and_right_to_left_text_are_shown_as_text(at: AppTest) -> None:
    text = "<script>alert('x')</script> <b>bold</b> 😀 שלום مرحبا"
    at.text_area(key="tok_text").set_value(text).run()
    assert not at.exception and not at.error
    bodies = " ".join(h.proto.body for h in at.get("html"))
    assert "&lt;script&gt;" in bodies or "&lt;" in bodies
    assert "<script" not in bodies and "<b>" not in bodies
    assert _counts_shown(at) == [t.count for t in tk.compare(text)]


def test_selection_is_read_from_the_url() -> None:
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.query_params["tokenizers"] = "t5,bigbird,nonsense"
    app.run()
    assert not app.exception
    assert app.multiselect(key="tok_names").value == ["t5", "bigbird"]


def test_page_file_does_not_shadow_the_tokenizers_package() -> None:
    """AppTest puts pages/ first on sys.path; `import tokenizers` must still give HF's package."""
    code = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import tokenizers; "
            "from tokenizers.processors import RobertaProcessing; print(tokenizers.__file__)")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "pages"), str(ROOT)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "site-packages" in out.stdout or "dist-packages" in out.stdout


def test_a_served_models_own_tokenizer_is_a_row_beside_the_shipped_ones(served_engine, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", served_engine.endpoint.base_url)
    monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", "gemma")
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.query_params["tokenizers"] = "gpt2"
    app.run()
    assert not app.exception and not app.error, (app.exception, app.error)
    expected = tk.compare(tk.PRESETS["Rare words & misspellings"], ["gpt2"])[0]
    ids = backend.served(served_engine.endpoint).tokenize(tk.PRESETS["Rare words & misspellings"]).ids
    assert _counts_shown(app) == [expected.count, len(ids)]
    assert [m.label for m in app.metric] == [tk.label_of("gpt2"), "served:gemma"]
    assert app.query_params["served"] == "gemma"
    rows = app.dataframe[-2].value  # the summary table: one row each
    assert list(rows["tokenizer"]) == ["gpt2", "served:gemma"] and rows["algorithm"].iloc[1] == "the server's own"
