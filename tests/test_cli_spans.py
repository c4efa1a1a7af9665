"""CLI parity with the live pages: ``infill``, ``qa``, ``colbert`` and ``--text-file`` on the decoder commands.

Each command's JSON equals the library result the page draws (same function, same arguments), and is
pinned by a golden file (tests/golden/cli/; a missing one fails). Timings and the device are dropped and floats rounded
before the comparison: they are the only parts that differ between runs or machines.
"""

from __future__ import annotations

import json

import pytest

from explorer.cli import main
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve
from explorer.tasks import colbert, infill, qa, similarity
from tests.tiny_gemma import save_tiny_gemma
from tests.tiny_models import save_tiny

# Differ between runs and machines (the goldens pin --device cpu --dtype float32, so what ran is checked).
TIMINGS = {"seconds", "latency_ms", "load_seconds"}
PROMPT = "Thank you ___ me to your party ___ week."
QUESTION = "When was the Eiffel Tower built?"
CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower in Paris. Gustave Eiffel's company designed and "
           "built the tower from 1887 to 1889 as the centerpiece of the 1889 World's Fair.")


def stable(obj):
    """The JSON without timings, floats rounded to 4 decimals (the golden's view of a result)."""
    if isinstance(obj, dict):
        return {k: stable(v) for k, v in obj.items() if k not in TIMINGS}
    if isinstance(obj, list):
        return [stable(v) for v in obj]
    return round(obj, 4) if isinstance(obj, float) else obj


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    # The CPU in float32 for every command, as a GPU machine would otherwise pick CUDA in bfloat16.
    argv = (*argv, "--device", "cpu", "--dtype", "float32") if argv[0] in {"infill", "qa", "colbert"} else argv
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own refusals: one line, exit 2
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def _golden_json(golden, name: str, out: str) -> dict:
    data = json.loads(out)
    golden(f"cli/{name}", json.dumps(stable(data), ensure_ascii=False, indent=2) + "\n")
    return data


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("spans")
    return {"t5": save_tiny("t5", root / "t5"), "qa": save_tiny("distilbert-qa", root / "squad"),
            "gemma": save_tiny_gemma(root / "gemma")}


# ---------------------------------------------------------------- infill

def test_infill_json_is_the_spans_page_result(dirs, capsys, golden) -> None:
    code, out, _ = _run(capsys, "infill", "--model", str(dirs["t5"]), "--text", PROMPT, "--max-new-tokens", "3",
                        "--json")
    data = _golden_json(golden, "infill-t5-tiny.json", out)
    page = infill.run(resolve(str(dirs["t5"])), PROMPT, 3).to_dict()
    assert code == 0 and stable(data) == stable(page)
    assert data["family"] == "t5" and len(data["spans"]) == 2 and data["prompt"] == PROMPT


def test_infill_text_file_equals_text(dirs, capsys, tmp_path) -> None:
    path = tmp_path / "prompt.txt"
    path.write_text(PROMPT, encoding="utf-8")
    _, by_text, _ = _run(capsys, "infill", "--model", str(dirs["t5"]), "--text", PROMPT, "--json")
    _, by_file, _ = _run(capsys, "infill", "--model", str(dirs["t5"]), "--text-file", str(path), "--json")
    assert stable(json.loads(by_text)) == stable(json.loads(by_file))


@pytest.mark.slow
def test_infill_with_the_bundled_decoder(bundled_decoder, capsys, golden) -> None:
    code, out, _ = _run(capsys, "infill", "--model", "gemma3-270m", "--text", PROMPT, "--json")
    data = _golden_json(golden, "infill-gemma3-270m.json", out)
    assert code == 0 and data["family"] == "causal" and all(data["spans"])


# ---------------------------------------------------------------- qa

def test_qa_extractive_json_is_the_page_result(dirs, capsys, golden) -> None:
    code, out, _ = _run(capsys, "qa", "--model", str(dirs["qa"]), "--question", QUESTION, "--context", CONTEXT,
                        "--json")
    data = _golden_json(golden, "qa-distilbert-tiny.json", out)
    page = qa.ask(resolve(str(dirs["qa"])), QUESTION, CONTEXT).to_dict()
    assert code == 0 and stable(data) == stable(page) and data["kind"] == "extractive"
    assert CONTEXT[data["start_char"]:data["end_char"]] == data["answer"]


def test_qa_context_file(dirs, capsys, tmp_path) -> None:
    path = tmp_path / "context.txt"
    path.write_text(CONTEXT, encoding="utf-8")
    _, by_file, _ = _run(capsys, "qa", "--model", str(dirs["qa"]), "--question", QUESTION, "--context-file",
                         str(path), "--json")
    assert json.loads(by_file)["context"] == CONTEXT


@pytest.mark.slow
def test_qa_generative_with_the_bundled_decoder(bundled_decoder, capsys, golden) -> None:
    code, out, _ = _run(capsys, "qa", "--model", "gemma3-270m", "--question", QUESTION, "--context", CONTEXT,
                        "--json")
    data = _golden_json(golden, "qa-gemma3-270m.json", out)
    assert code == 0 and data["kind"] == "generative" and "1889" in data["answer"]


@pytest.mark.parametrize(("argv", "needle"), [
    (["--question", "", "--context", CONTEXT], "question is empty"),
    (["--question", QUESTION, "--context", " "], "context is empty"),
    (["--question", QUESTION, "--context-file", "/no/such/file.txt"], "Cannot read --context-file"),
    (["--question", QUESTION], "one of the arguments --context --context-file is required"),
])
def test_qa_bad_input_is_one_line_before_loading(argv, needle: str, capsys) -> None:
    code, _, err = _run(capsys, "qa", "--model", "/no/such/model", *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1 and needle in err


# ---------------------------------------------------------------- colbert

def test_colbert_json_is_the_similarity_page_ranking(capsys, golden, bundled_encoder) -> None:
    sentences = ["A man is eating food.", "A man is riding a horse.", "A woman is playing violin."]
    code, out, _ = _run(capsys, "colbert", "--query", "A man is eating pasta.", *sentences, "--json")
    data = _golden_json(golden, "colbert.json", out)
    page = colbert.rank(colbert.load_encoder(colbert.encoder_ref()), load_model(resolve(similarity.BI_ENCODER)),
                        "A man is eating pasta.", sentences).to_dict()
    assert code == 0 and stable(data) == stable(page)
    assert data["docs"][0]["text"] == "A man is eating food." and data["docs"][0]["colbert_rank"] == 1


def test_colbert_refuses_bad_sentences_before_loading(capsys) -> None:
    code, _, err = _run(capsys, "colbert", "--query", "q", "", "  ", "--model", "/no/such/model")
    assert code == 2 and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- --text-file on generate / next-token

@pytest.mark.parametrize("command", ["generate", "next-token"])
def test_text_file_equals_text(command: str, dirs, capsys, tmp_path) -> None:
    path = tmp_path / "prompt.txt"
    path.write_text("The capital of France is", encoding="utf-8")
    extra = ["--max-new-tokens", "3"] if command == "generate" else []
    _, by_text, _ = _run(capsys, command, "--model", str(dirs["gemma"]), "--text", "The capital of France is",
                         *extra, "--json")
    _, by_file, _ = _run(capsys, command, "--model", str(dirs["gemma"]), "--text-file", str(path), *extra, "--json")
    assert json.loads(by_text) == json.loads(by_file)


@pytest.mark.parametrize("command", ["generate", "next-token"])
@pytest.mark.parametrize(("content", "needle"), [
    (b"", "is empty"), (b"  \n\t", "is empty"), (b"\xff\xfe not utf-8", "not UTF-8"),
    (None, "Cannot read"), ("dir", "is a directory"), ("big", "larger than"),
])
def test_text_file_problems_are_one_line_before_loading(command: str, content, needle: str, capsys, tmp_path,
                                                        monkeypatch) -> None:
    from explorer.core import userfiles

    path = tmp_path / "prompt.txt"
    if content == "dir":
        path = tmp_path
    elif content == "big":
        monkeypatch.setattr(userfiles, "MAX_TEXT_BYTES", 10)
        path.write_bytes(b"x" * 11)
    elif content is not None:
        path.write_bytes(content)
    code, _, err = _run(capsys, command, "--model", "/no/such/model", "--text-file", str(path))
    assert code == 2 and len(err.strip().splitlines()) == 1 and needle in err, err


def test_text_and_text_file_together_are_refused(capsys, tmp_path) -> None:
    code, _, err = _run(capsys, "generate", "--model", "m", "--text", "a", "--text-file", str(tmp_path))
    assert code == 2 and "not allowed with" in err
