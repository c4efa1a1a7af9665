"""explorer.cli.inference: fill-mask, models and download on the command line (one line per error, exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.runtime import weights
from explorer.runtime.loading import best_device
from explorer.runtime.resolve import resolve
from tests.tiny_models import fake_variant, patch_catalog, save_tiny


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cli-fm")
    return {k: save_tiny(k, root / k) for k in ("bert", "roberta")}


@pytest.fixture()
def catalog(monkeypatch):
    monkeypatch.delenv("EXPLORER_MODELS_DIR", raising=False)
    patch_catalog(monkeypatch, fake_variant("tiny-bert", "bert", "org/tiny-bert"),
                  fake_variant("tiny-roberta", "roberta", "org/tiny-roberta", "gpt2"),
                  fake_variant("sentence-bert", "bert", weights.BUNDLED_HUB_ID))


def test_cli_fill_mask_json_and_missing_weights(dirs, capsys, monkeypatch) -> None:
    rc = main(["fill-mask", "--models", f"{dirs['bert']},{dirs['roberta']}", "--text", "The [MASK] sat on the ___.",
               "--top-k", "3", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and [len(m["masks"]) for m in out["models"]] == [2, 2]
    assert all(len(k["predictions"]) == 3 and {"token", "score"} <= set(k["predictions"][0])
               for m in out["models"] for k in m["masks"])
    monkeypatch.delenv("EXPLORER_MODELS_DIR", raising=False)
    rc = main(["fill-mask", "--models", "bert-base", "--text", "The [MASK] sat."])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "python -m explorer download bert-base" in err[0]
    assert main(["fill-mask", "--models", str(dirs["bert"]), "--text", "no blank"]) == 2


def test_cli_models_and_download(catalog, capsys, monkeypatch) -> None:
    assert main(["models", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["device"] == best_device() and [m["key"] for m in out["models"]][:2] == ["tiny-bert", "tiny-roberta"]
    assert main(["models"]) == 0 and "sentence-bert" in capsys.readouterr().out
    from huggingface_hub import HfApi

    monkeypatch.setattr(HfApi, "model_info", lambda self, r, **kw: (_ for _ in ()).throw(ConnectionError("down")))
    assert main(["download", "tiny-bert"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Download of org/tiny-bert failed" in err[0]


@pytest.mark.parametrize(("name", "key"), [
    ("bert-base-uncased", "bert-base"), ("distilbert-base-uncased", "distilbert"), ("albert-base-v2", "albert-base"),
    ("gpt2-medium", None)])
def test_legacy_hub_names_are_hub_ids_to_download(name: str, key: str | None, capsys, monkeypatch, tmp_path) -> None:
    """The names of every old tutorial are hub ids: offline, the weights are not there, here is how to get them."""
    monkeypatch.delenv("EXPLORER_MODELS_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))  # nothing downloaded
    assert main(["fill-mask", "--models", name, "--text", "Paris is the [MASK] of France."]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not present" in err[0] and f"python -m explorer download {name}" in err[0]
    assert "neither a catalog key" not in err[0]
    assert (f"The catalog key {key!r} names the same checkpoint" in err[0]) if key else "catalog key" not in err[0]
    from huggingface_hub import HfApi

    asked: list[str] = []
    monkeypatch.setattr(HfApi, "model_info", lambda self, r, **kw: (asked.append(r), (_ for _ in ()).throw(
        ConnectionError("down")))[1])
    assert main(["download", name]) == 2 and "Download of" in capsys.readouterr().err
    assert asked and (asked[0] != name) == bool(key)  # a catalog checkpoint is asked for under its owner


def test_fill_mask_text_output_and_bad_top_k(dirs, capsys) -> None:
    rc = main(["fill-mask", "--models", str(dirs["bert"]), "--text", "The [MASK] sat.", "--top-k", "2",
               "--device", "cpu"])
    out = capsys.readouterr().out
    assert rc == 0 and out.startswith("== bert  [cpu · float32, ") and out.count("mask 1:") == 1
    with pytest.raises(SystemExit) as exit_:
        main(["fill-mask", "--models", str(dirs["bert"]), "--text", "The [MASK] sat.", "--top-k", "x"])
    assert exit_.value.code == 2 and "argument --top-k: must be a whole number" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "7", "two", "-1"])
def test_decoder_tokens_out_of_range_is_one_line(value: str, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["fill-mask", "--models", "gemma3-270m", "--text", "a [MASK] b", "--decoder-tokens", value])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "argument --decoder-tokens: must be" in err and len(err.splitlines()) == 1


def test_decoder_tokens_reach_the_library(capsys, monkeypatch) -> None:
    from explorer.tasks import fillmask

    seen = {}

    def fake(specs, text, top_k, **kw):
        seen.update(kw)
        return fillmask.FillMaskResult(text, 1, (), ())

    monkeypatch.setattr(fillmask, "fill_mask", fake)
    assert main(["fill-mask", "--models", "gemma3-270m", "--text", "a [MASK] b", "--decoder-tokens", "4"]) == 0
    assert seen["answer_tokens"] == 4


# ---- fill-mask --text-file: one prompt per line, batched ----------------------------------
FILE_PROMPTS = ("The capital of France is [MASK], a city known for its museums and its food.\n"
                "\n"
                "Hi [MASK].\n"
                "No blank on this line.\n"
                "She [MASK] to the store and bought ___ apples.\n")


@pytest.fixture()
def cpu(monkeypatch) -> None:
    """The golden file and the pipeline comparison are float32 on the CPU: pinned where a GPU would be picked."""
    from explorer.runtime import loading, placement

    monkeypatch.setattr(loading, "best_device", lambda: "cpu")
    monkeypatch.setattr(placement, "best_device", lambda: "cpu")  # what "auto" resolves through


@pytest.fixture(scope="module")
def peaked(tmp_path_factory) -> Path:
    from tests.peaked_models import save_peaked

    return save_peaked("bert", tmp_path_factory.mktemp("cli-fm-file") / "bert")


def _errors(err: str) -> list[str]:
    """stderr without the progress lines."""
    return [line for line in err.splitlines() if line.startswith("error:")]


def _stable(entries: list[dict], path: Path) -> list[dict]:
    """The JSON without what differs between machines: the model's path, timings, last float digits."""
    for entry in entries:
        for model in entry.get("models", []):
            model.update(model=model["model"].replace(str(path), "<tiny-bert>"), latency_ms=0.0)
            for mask in model["masks"]:
                for p in mask["predictions"]:
                    p["score"] = round(p["score"], 4)
    return entries


def test_text_file_json_matches_golden(cpu, peaked, tmp_path, golden, capsys) -> None:
    prompts = tmp_path / "prompts.txt"
    prompts.write_text(FILE_PROMPTS, encoding="utf-8")
    rc = main(["fill-mask", "--models", str(peaked), "--text-file", str(prompts), "--top-k", "3", "--json"])
    out, err = capsys.readouterr()
    assert rc == 2 and _errors(err) == ["error: line 4: There is no mask in the prompt: put [MASK] "
                                        "(or <mask>, or ___) where a word is missing."]
    entries = json.loads(out)
    assert [e["line"] for e in entries] == [1, 3, 4, 5]
    golden("cli/fill-mask-text-file.json", json.dumps(_stable(entries, peaked), ensure_ascii=False, indent=2) + "\n")


def test_text_file_equals_the_pipeline_prompt_by_prompt(cpu, peaked, tmp_path, capsys) -> None:
    from transformers import pipeline

    from explorer.runtime.loading import load_model

    lines = [line for line in FILE_PROMPTS.splitlines() if "[MASK]" in line or "___" in line]
    prompts = tmp_path / "ok.txt"
    prompts.write_text("\n".join(lines), encoding="utf-8")
    assert main(["fill-mask", "--models", str(peaked), "--text-file", str(prompts), "--top-k", "4", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    lm = load_model(resolve(str(peaked)), "masked-lm")
    ref = pipeline("fill-mask", model=lm.model, tokenizer=lm.tokenizer, top_k=4)(
        [line.replace("___", "[MASK]") for line in lines], batch_size=64)
    for entry, expected in zip(entries, ref, strict=True):
        expected = [expected] if isinstance(expected[0], dict) else expected
        masks = entry["models"][0]["masks"]
        assert ([[p["token"] for p in m["predictions"]] for m in masks]
                == [[e["token_str"] for e in x] for x in expected])
        for m, x in zip(masks, expected, strict=True):
            assert [p["score"] for p in m["predictions"]] == pytest.approx([e["score"] for e in x], abs=1e-5)


def test_text_file_text_output_and_stdin(cpu, peaked, tmp_path, capsys, monkeypatch) -> None:
    import io

    prompts = tmp_path / "p.txt"
    prompts.write_text("A [MASK].\nB [MASK] c.\n", encoding="utf-8")
    assert main(["fill-mask", "--models", str(peaked), "--text-file", str(prompts), "--top-k", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## line 1: A [MASK].\n== bert  [cpu · float32, ") and out.count("mask 1:") == 2
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"One [MASK].\n")))
    assert main(["fill-mask", "--models", str(peaked), "--text-file", "-", "--json"]) == 0
    assert [e["line"] for e in json.loads(capsys.readouterr().out)] == [1]


def test_text_file_model_error_once(peaked, tmp_path, capsys) -> None:
    prompts = tmp_path / "p.txt"
    prompts.write_text("A [MASK].\nB [MASK] c.\n", encoding="utf-8")
    assert main(["fill-mask", "--models", f"{peaked},/no/such/dir", "--text-file", str(prompts), "--json"]) == 2
    out, err = capsys.readouterr()
    assert len(_errors(err)) == 1 and _errors(err)[0].startswith("error: /no/such/dir: ")
    assert all(len(e["models"]) == 1 for e in json.loads(out))


@pytest.mark.parametrize(("content", "message"), [
    (b"", "no prompts"), (b"\n  \n\n", "no prompts"), (b"\x00" * 1000, "binary"),
    (bytes(range(256)) * 4, "not UTF-8"), ("café [MASK]".encode("latin-1"), "not UTF-8"),
    (b"a [MASK]\n" * 300_000, "larger than 2,000,000 bytes"),
])
def test_bad_text_files_are_one_line(peaked, tmp_path, capsys, content: bytes, message: str) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    assert main(["fill-mask", "--models", str(peaked), "--text-file", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_text_file_missing_directory_and_both_inputs(peaked, tmp_path, capsys) -> None:
    for path, message in ((tmp_path / "none.txt", "Cannot read --text-file"), (tmp_path, "is a directory")):
        assert main(["fill-mask", "--models", str(peaked), "--text-file", str(path)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0]
    with pytest.raises(SystemExit) as stop:
        main(["fill-mask", "--models", str(peaked), "--text", "a [MASK]", "--text-file", str(tmp_path / "x")])
    assert stop.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_jsonl_streams_each_chunk_with_progress_and_ctrl_c_keeps_what_was_printed(cpu, peaked, tmp_path, capsys,
                                                                                   monkeypatch) -> None:
    from explorer.tasks.fillmask import batch as fillbatch

    prompts = tmp_path / "p.txt"
    prompts.write_text("\n".join(f"Line {i} is [MASK]." for i in range(5)), encoding="utf-8")
    monkeypatch.setattr(fillbatch, "STREAM_CHUNK", 2)
    assert main(["fill-mask", "--models", str(peaked), "--text-file", str(prompts), "--top-k", "2", "--jsonl"]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(line)["line"] for line in out.splitlines()] == [1, 2, 3, 4, 5]
    assert [line.split(" prompts")[0] for line in err.splitlines() if line.startswith("fill-mask: ")
            and "left" in line] == ["fill-mask: 2/5", "fill-mask: 4/5", "fill-mask: 5/5"]

    real = fillbatch.fill_mask_stream

    def interrupted(*args, **kwargs):  # Ctrl-C while the second chunk runs
        chunks = real(*args, **kwargs)
        yield next(chunks)
        raise KeyboardInterrupt

    monkeypatch.setattr(fillbatch, "fill_mask_stream", interrupted)
    assert main(["fill-mask", "--models", str(peaked), "--text-file", str(prompts), "--jsonl"]) == 130
    assert [json.loads(line)["line"] for line in capsys.readouterr().out.splitlines()] == [1, 2]


def test_jsonl_needs_a_file_of_prompts(capsys) -> None:
    assert main(["fill-mask", "--models", "bert-base", "--text", "A [MASK].", "--jsonl"]) == 2
    assert "--jsonl streams the answers of a file of prompts" in capsys.readouterr().err
