"""CLI of "Why this prediction": ``lens``, ``attribute`` and ``tuned-lens train`` print the issue's JSON, equal to
the library's result; bad input and served insides are one line on stderr with exit 2."""

from __future__ import annotations

import json

import pytest

from explorer.cli import main
from explorer.explain import attribution, lens
from explorer.runtime.resolve import resolve
from tests.tiny_gemma import save_tiny_gemma

TEXT = "The capital of France is"
CORPUS = "\n\n".join(f"The function number {i} returns a list of values from the module, and the loop reads it "
                     f"again in order {i % 7}." for i in range(200))


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    return str(save_tiny_gemma(tmp_path_factory.mktemp("explain-cli") / "gemma"))


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        local = argv[0] != "tuned-lens" and "--endpoint" not in argv  # a served model runs where it is served
        code = main([*argv, "--device", "cpu", "--dtype", "float32"] if local else list(argv))
    except SystemExit as exc:  # argparse's own refusals: one line, exit 2
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_lens_prints_every_layer_as_the_library_reads_it(gemma, capsys) -> None:
    code, out, err = _run(capsys, "lens", "--model", gemma, "--text", TEXT, "--target", "Paris", "--top-k", "3",
                          "--json")
    assert code == 0, err
    data = json.loads(out)
    assert {"model", "position", "layers"} <= data.keys() and data["position"] == 5
    assert [x["layer"] for x in data["layers"]] == [0, 1, 2, 3]
    assert set(data["layers"][0]) >= {"layer", "top", "target_rank", "target_probability", "entropy", "kl_to_final"}
    want = lens.run(resolve(gemma, None), TEXT, "Paris", top_k=3, grid=False, device="cpu")
    assert [x["kl_to_final"] for x in data["layers"]] == [x.kl_to_final for x in want.layers]


@pytest.mark.parametrize("method", ["grad", "grad-input", "ig", "occlusion"])
def test_attribute_prints_the_issues_fields(gemma, capsys, method) -> None:
    code, out, err = _run(capsys, "attribute", "--model", gemma, "--text", TEXT, "--target", "Paris", "--foil",
                          "Rome", "--method", method, "--steps", "8", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert {"model", "method", "target", "output", "baseline_output", "tokens"} <= data.keys()
    assert data["method"] == method and data["target"] == " Paris" and len(data["tokens"]) == 5
    assert (data["baseline_output"] is None) == (method != "ig")
    want = attribution.run(resolve(gemma, None), TEXT, "Paris", method, foil="Rome", steps=8, device="cpu")
    assert [t["score"] for t in data["tokens"]] == pytest.approx([t.score for t in want.tokens], abs=1e-5)


def test_the_plain_output_reads_as_a_list(gemma, capsys) -> None:
    code, out, _ = _run(capsys, "attribute", "--model", gemma, "--text", TEXT, "--target", "Paris", "--method",
                        "occlusion")
    assert code == 0 and "occlusion" in out and "' capital'" in out


def test_tuned_lens_train_saves_and_reports_every_layer(gemma, capsys, tmp_path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text(CORPUS, encoding="utf-8")
    code, out, err = _run(capsys, "tuned-lens", "train", "--model", gemma, "--text-file", str(text), "--steps", "2",
                          "--windows", "2", "--seq-len", "16", "--heldout", "1", "--out", str(tmp_path / "lens"),
                          "--device", "cpu", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["steps"] == 2 and len(data["logit_kl"]) == len(data["tuned_kl"]) == 4
    assert (tmp_path / "lens" / "tuned-lens.json").is_file()
    assert "step 2 of 2" in err  # progress on stderr


@pytest.mark.parametrize(("argv", "said"), [
    (("lens", "--endpoint", "gemma", "--text", TEXT), "insides"),
    (("attribute", "--model", "gemma3-270m", "--text", "", "--target", "Paris"), "empty"),
    (("attribute", "--model", "gemma3-270m", "--text", "x" * 2000, "--target", "Paris"), "characters"),
    (("lens", "--model", "sentence-bert", "--text", "A man eats."), "no language-model head"),
    (("attribute", "--model", "gemma3-270m", "--text", TEXT, "--target", "Paris", "--method", "lime"), "invalid"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, monkeypatch, argv, said) -> None:
    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", "gemma")
    code, _, err = _run(capsys, *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1 and said in err, err


def test_a_special_token_typed_as_the_target_is_one_line(gemma, capsys) -> None:
    code, _, err = _run(capsys, "attribute", "--model", gemma, "--text", TEXT, "--target", "<|endoftext|>")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "special token" in err, err


@pytest.mark.parametrize("method", ["grad-input", "ig", "occlusion"])
def test_a_text_that_leaves_nothing_to_attribute_is_one_line_before_the_model_loads(capsys, monkeypatch,
                                                                                   method) -> None:
    from explorer.runtime import loading

    monkeypatch.setattr(loading, "load_model", lambda *a, **k: pytest.fail("the model was loaded"))
    code, _, err = _run(capsys, "attribute", "--model", "gemma3-270m", "--text", "___", "--target", "Paris",
                        "--method", method)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "leaves no token to attribute" in err, err


def test_range_errors_are_said_before_the_model_loads(capsys, monkeypatch) -> None:
    """A layer, head or position no model of this size has: one line from the config (9 s and 1.8 GB of loading
    came first before)."""
    from explorer.interventions import models
    from explorer.runtime import loading

    monkeypatch.setattr(loading, "load_model", lambda *a, **k: pytest.fail("the model was loaded"))
    monkeypatch.setattr(models, "load", lambda *a, **k: pytest.fail("the model was loaded"))
    for argv, said in ((("ablate", "--model", "gemma3-270m", "--text", TEXT, "--head", "99.99"), "Layer 99 is out"),
                       (("ablate", "--model", "gemma3-270m", "--text", TEXT, "--head", "0.99"), "Head 99 is out"),
                       (("steer", "--model", "gemma3-270m", "--text", TEXT, "--positive", "a", "--negative", "b",
                         "--layer", "99", "--coefficient", "1"), "Layer 99 is out"),
                       (("lens", "--model", "gemma3-270m", "--text", TEXT, "--position", "100000"), "Position 100000")):
        code, _, err = _run(capsys, *argv)
        assert code == 2 and len(err.strip().splitlines()) == 1 and said in err, err


def test_integrated_gradients_choose_their_steps_and_say_them(gemma, capsys) -> None:
    code, out, err = _run(capsys, "attribute", "--model", gemma, "--text", TEXT, "--target", "Paris", "--foil",
                          "Rome", "--method", "ig", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["steps"] in attribution.AUTO_STEPS
    said = " ".join(data["notices"])
    assert (data["completeness"] <= attribution.AUTO_GAP and f"took {data['steps']} steps (auto)" in said) or \
        (data["steps"] == attribution.AUTO_STEPS[-1] and "stopped at" in said), said
