"""Served sentence embeddings against a real engine (llama-cpp-python on 127.0.0.1 serving the bundled Gemma GGUF
with --embedding): meaning, determinism, refusals, the CLI and the Similarity page beside the local bi-encoder."""

from __future__ import annotations

import json

import pytest

from explorer.core import limits
from explorer.core.errors import ExplorerError
from explorer.serving import embedding, localengine
from explorer.serving.client import ServedError
from explorer.serving.endpoints import Endpoint
from tests.pages.conftest import assert_clean, figures, page_app, shown

SENTENCES = ["A man is eating food.", "A man is eating a piece of bread.", "The stock market fell sharply today."]


def _closed() -> Endpoint:
    return Endpoint("closed", f"http://127.0.0.1:{localengine.free_port()}/v1", "gemma3-270m")


def test_a_paraphrase_is_closer_than_an_unrelated_sentence_and_a_text_has_one_vector(served_embedder) -> None:
    ep = served_embedder.endpoint
    res = embedding.similarity(ep, SENTENCES)
    paraphrase, unrelated = res.matrix[0][1], res.matrix[0][2]
    assert paraphrase > unrelated + 0.1, res.matrix  # measured 0.965 against 0.651
    assert res.device == "served" and "llama-cpp-python" in res.device_name and "(gemma3-270m)" in res.device_name
    assert res.dim == 640 and res.model == ep.key
    twice = embedding.embed(ep, [SENTENCES[0], SENTENCES[0], SENTENCES[1]])
    assert float((twice[0] - twice[1]).abs().max()) < 1e-6  # in one call (this engine: one request per text)
    again = embedding.embed(ep, [SENTENCES[0]])
    assert float((twice[0] - again[0]).abs().max()) < 1e-6  # and in another
    # llama-cpp-python 0.3.36 gets a batch of a pooling-none model wrong: found, said, and worked around
    assert embedding.batch_size(ep) == 1 and any("embeds a batch wrongly" in n.text for n in res.notices)
    hits = embedding.search(ep, "A man is eating pasta.", SENTENCES)
    assert hits.hits[-1].sentence == SENTENCES[2] and hits.device == "served"


def test_the_generation_server_is_refused_with_the_probes_reason(served_engine) -> None:
    with pytest.raises(ServedError, match="cannot do sentence embeddings: .*embedding=True") as err:
        embedding.similarity(served_engine.endpoint, SENTENCES)
    assert err.value.kind == "missing"


@pytest.mark.parametrize("texts, needle", [
    ([], "No texts"), (["a", "  "], "Text 2 is empty"), (["a\x00b"], "NUL"),
    (["x" * (limits.SERVED_EMBEDDING_TEXT_CHARS + 1)], "8,000 at most"), ("one string", "list of strings"),
], ids=["none", "blank", "nul", "huge", "str"])
def test_bad_input_is_refused_before_any_request(texts, needle: str) -> None:
    with pytest.raises(ExplorerError, match=needle):  # the port is closed: a request would say so instead
        embedding.embed(_closed(), texts)


def test_a_closed_port_is_one_clear_message() -> None:
    with pytest.raises(ServedError, match="connection was refused") as err:
        embedding.similarity(_closed(), SENTENCES)
    assert "Traceback" not in str(err.value) and "\n" not in str(err.value)


def test_cli_similarity_on_a_served_model(served_embedder, capsys) -> None:
    from explorer.cli import main

    url = served_embedder.endpoint.base_url
    assert main(["similarity", "--base-url", url, "--model", "gemma3-270m", "--json", *SENTENCES]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["device"] == "served" and out["dim"] == 640 and out["matrix"][0][1] > out["matrix"][0][2]
    closed = _closed().base_url
    assert main(["similarity", "--base-url", closed, "--model", "gemma3-270m", "a", "b"]) == 2
    err = capsys.readouterr().err.strip()
    assert "connection was refused" in err and "\n" not in err


def test_similarity_page_shows_the_served_model_beside_the_local_one(served_embedder, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", served_embedder.endpoint.base_url)
    monkeypatch.setenv("EXPLORER_ENDPOINT_MODEL", "gemma3-270m")
    monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", "embed")
    at = page_app("similarity.py").run()
    assert_clean(at)
    captions = [c.value for c in at.caption]
    served = [c for c in captions if "llama-cpp-python" in c and "embed at 127.0.0.1" in c]
    assert len(served) == 2 and all("(gemma3-270m) · as served" in c for c in served)  # matrix and search
    assert any("8 sentences · 640-d embeddings" in c for c in served)
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    # the local page's six, and the served model's own matrix and search chart (every model gets both)
    assert sum("served:embed" in t for t in titles) == 1 and len(titles) == 8
    assert at.dataframe[1].value["sentence"].iloc[0].startswith("A man is eating")  # the served ranking
    assert at.query_params["served"] == "embed"
    assert not [w for w in shown(at.warning) if "could not" in w or "left out" in w]


def test_a_served_failure_is_one_warning_per_panel_and_the_local_model_goes_on(served_embedder, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", served_embedder.endpoint.base_url)
    monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", "embed")
    at = page_app("similarity.py")
    at.session_state["sim_text"] = "\n".join([*SENTENCES, "word " * 2_000])  # past the served per-text limit
    at.run()
    assert_clean(at)
    failed = [w for w in shown(at.warning) if "could not" in w]
    assert len(failed) == 2 and all("Text 4 has 9,999 characters" in w for w in failed)  # matrix tab, search tab
    assert len(figures(at)) == 6  # the local bi-encoder's views all drawn (its long line cut, with a notice)
