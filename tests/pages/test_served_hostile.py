"""Every page that offers served models, with misbehaving engines configured (the suite's own hostile engine on
127.0.0.1, named in an EXPLORER_ENDPOINTS_FILE as an operator would): answers of the wrong types, a probe answered
with garbage, an answer dripped a byte at a time, an engine's traceback. No page goes down: each bad endpoint is one
message in its own place (a left-out warning, naming it in bold, or a red box in its column) and the page goes on.
The default selection takes one endpoint per engine and model, and a key in a URL never reaches a page."""

from __future__ import annotations

import logging

import pytest

from tests.hostile_engine import SECRET_PATH, HostileEngine
from tests.pages.conftest import assert_clean, page_app, shown
from tests.tiny_gemma import save_tiny_gemma

SMALL = "electra-small-generator"  # the smallest catalog MLM: random weights build fast


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> str:
    return str(save_tiny_gemma(tmp_path_factory.mktemp("gemma")))


@pytest.fixture(scope="module")
def engines():
    """name -> engine: the work's answers of the wrong types ("wrong-*"), a probe answered with garbage ("garbled"),
    the work's answer or every answer dripped ("drip", "drip-probe": a 1 s timeout in the file), a traceback for
    every request."""
    made = {"wrong-logprobs": HostileEngine("top-logprobs-number", name="wrong-logprobs", model="m1"),
            "wrong-embeddings": HostileEngine("ragged", name="wrong-embeddings", model="m2"),
            "wrong-ids": HostileEngine("ids-infinity", name="wrong-ids", model="m3"),
            "garbled": HostileEngine("logprobs-number", name="garbled", model="m4", spare_probe=False),
            "drip": HostileEngine("drip", name="drip", model="m5", drip_s=0.2),
            "drip-probe": HostileEngine("drip", name="drip-probe", model="m7", drip_s=0.2, spare_probe=False),
            "traceback": HostileEngine("traceback", name="traceback", model="m6", spare_probe=False)}
    yield made
    for engine in made.values():
        engine.close()


@pytest.fixture
def configured(engines, tmp_path, monkeypatch):
    file = tmp_path / "endpoints.toml"
    file.write_text("".join(f'[[endpoint]]\nname = "{n}"\nbase_url = "{e.base_url}"\nmodel = "{e.endpoint.model}"\n'
                            f'label = "Bad {n}"\ntimeout = {1 if "drip" in n else 30}\n' for n, e in engines.items()))
    monkeypatch.setenv("EXPLORER_ENDPOINTS_FILE", str(file))
    return engines


def _left_out(at) -> dict[str, str]:
    """The left-out warnings by endpoint label, checked to show the label in bold (markdown, not literal **)."""
    out = {}
    for box in at.warning:
        if "is left out" in box.value:
            assert box.value.startswith("**Bad ") and "\\*" not in box.value, box.value
            out[box.value.split("**")[1]] = box.value.replace("\\", "")
    return out


def _no_paths(at) -> None:
    every = " ".join(shown(at.warning) + shown(at.error) + [c.value for c in at.caption])
    assert SECRET_PATH not in every and "/opt/engine" not in every and "Traceback" not in every


def test_models_lists_every_misbehaving_endpoint_with_its_reason(configured) -> None:
    at = page_app("models.py").run()
    assert_clean(at)
    table = next(d.value for d in at.dataframe if "model key" in d.value.columns).set_index("model key")
    assert table.loc["served:garbled", "top-k per token"] == "no"
    assert "choices[0].logprobs" in table.loc["served:garbled", "notes"]
    drip = table.loc["served:drip-probe"]
    assert drip["engine"] == "unreachable" and "within 1 s, the longest its probe waits" in drip["notes"]
    assert "RuntimeError: CUDA out of memory" in table.loc["served:traceback", "notes"]
    assert SECRET_PATH not in table.to_string()


def test_decoding_survives_wrong_types_a_garbled_probe_and_a_drip(configured, tiny_dir) -> None:
    at = page_app("decoding.py", model=tiny_dir, strategies="greedy", n="1",
                  served="wrong-logprobs,garbled,drip,traceback").run()
    at.text_area(key="dec_prompt").set_value("Paris is the capital of").run()  # not the probe's own text
    assert_clean(at, errors_expected=True)
    left = _left_out(at)
    assert "choices[0].logprobs" in left["Bad garbled"] and "CUDA out of memory" in left["Bad traceback"]
    errors = " ".join(shown(at.error))
    assert "top_logprobs" in errors and "did not answer within 1.0 s" in errors
    assert [t.value.split(":")[0].strip() for t in at.text] == ["greedy"]  # the local model still answers
    _no_paths(at)


def test_fill_mask_survives_a_served_decoder_of_the_wrong_types(configured) -> None:
    at = page_app("fill_mask.py", models=SMALL, served="wrong-logprobs,garbled").run()
    assert_clean(at, errors_expected=True)
    assert "top_logprobs" in " ".join(shown(at.error)) and "Bad garbled" in _left_out(at)
    assert "choices[0].logprobs" in _left_out(at)["Bad garbled"]
    assert any("ELECTRA" in s.value for s in at.subheader)  # the local column answered


def test_spans_and_qa_survive_a_served_decoder_of_the_wrong_types(configured) -> None:
    # local models whose weights are not on disk: each says so and runs nothing (this test is about the served ones)
    at = page_app("spans.py", served="wrong-logprobs,drip,garbled", models="t5-small",
                  qa="distilbert/distilbert-base-cased-distilled-squad").run()
    assert_clean(at, errors_expected=True)
    errors = " ".join(shown(at.error))
    assert "top_logprobs" in errors and "did not answer within 1.0 s" in errors and "Bad garbled" in _left_out(at)


def test_similarity_survives_ragged_embeddings(configured) -> None:
    at = page_app("similarity.py", served="wrong-embeddings,traceback").run()
    assert_clean(at)
    warned = " ".join(shown(at.warning))
    assert "could not embed the sentences" in warned and "different sizes" in warned
    assert "CUDA out of memory" in _left_out(at)["Bad traceback"]


def test_tokenizers_survive_token_ids_that_are_not_integers(configured) -> None:
    at = page_app("tokenization.py", tokenizers="gpt2", served="wrong-ids,traceback").run()
    assert_clean(at, errors_expected=True)
    assert "tokens[0]" in " ".join(shown(at.error)) and "Bad traceback" in _left_out(at)
    assert [m.label for m in at.metric] == ["GPT-2 (byte-level BPE)"] or len(at.metric) == 1


def test_the_default_takes_one_endpoint_per_engine_and_model(tmp_path, monkeypatch) -> None:
    with HostileEngine(name="first", model="same") as first, HostileEngine(name="copy", model="same") as copy, \
            HostileEngine(name="other", model="other") as other:
        file = tmp_path / "endpoints.toml"
        file.write_text("".join(f'[[endpoint]]\nname = "{e.endpoint.name}"\nbase_url = "{e.base_url}"\n'
                                f'model = "{e.endpoint.model}"\n' for e in (first, copy, other)))
        monkeypatch.setenv("EXPLORER_ENDPOINTS_FILE", str(file))
        at = page_app("tokenization.py", tokenizers="gpt2").run()
        assert_clean(at)
        assert at.multiselect(key="tok_served").value == ["first", "other"]  # the copy of "same" is not picked
        assert at.query_params["served"] == "first,other"


@pytest.fixture
def slow(tmp_path, monkeypatch):
    """A served decoder that answers one request at a time, each after 0.6 s (as a CPU engine scores a text), and
    a page budget of 3 s: its columns cannot finish in time."""
    with HostileEngine("slow", name="slow", model="slow", drip_s=0.6) as engine:
        file = tmp_path / "endpoints.toml"
        file.write_text(f'[[endpoint]]\nname = "slow"\nbase_url = "{engine.base_url}"\nmodel = "slow"\n'
                        'label = "Slow engine"\nmax_concurrent = 1\n')
        monkeypatch.setenv("EXPLORER_ENDPOINTS_FILE", str(file))
        monkeypatch.setenv("EXPLORER_REQUEST_SECONDS", "3")
        yield engine


def _served_column(at):
    """The served decoder's own column, which must say its time ran out (the other columns are not its place)."""
    column = next(c for c in at.columns
                  if any("Slow engine (served)" in s.value.replace("\\", "") for s in c.subheader))
    said = [w for w in shown(column.warning) if "time ran out" in w or "Filled: 1 of 2 blanks" in w]
    assert said, shown(at.warning)
    return column


def test_a_served_fill_mask_column_out_of_time_shows_what_it_scored(slow) -> None:
    at = page_app("fill_mask.py", models=SMALL, served="slow").run()
    assert_clean(at)
    column = _served_column(at)
    assert column.dataframe and len(column.dataframe[0].value) >= 1  # its ranked answers, in its own column


def test_served_span_infilling_out_of_time_keeps_the_blanks_it_filled(slow) -> None:
    at = page_app("spans.py", served="slow", models="t5-small", max_new="1",
                  qa="distilbert/distilbert-base-cased-distilled-squad").run()
    assert_clean(at)
    column = _served_column(at)
    assert any("Thank you" in m.value for m in column.markdown)  # the filled text, not only the stop


SECRET = "SECRET0123456789abcdef"


def test_a_key_in_an_endpoint_url_appears_on_no_page_and_in_no_log(monkeypatch, caplog, tiny_dir) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", f"http://127.0.0.1:9/v1?api_key=sk-{SECRET}")
    for page, query in (("models.py", {}), ("decoding.py", {"model": tiny_dir, "strategies": "greedy", "n": "1"}),
                        ("fill_mask.py", {"models": SMALL}), ("tokenization.py", {"tokenizers": "gpt2"}),
                        ("spans.py", {"models": "t5-small", "qa": "distilbert/distilbert-base-cased-distilled-squad"}),
                        ("similarity.py", {})):
        at = page_app(page, **query).run()
        assert not at.exception
        every = " ".join(str(el.value) for kind in ("markdown", "caption", "warning", "error", "info", "text")
                         for el in getattr(at, kind))
        assert "holds more than a base URL" in every and SECRET not in every, page
    assert SECRET not in caplog.text
