"""CLI: list / inspect / compare (in-process, plus one real subprocess for exit codes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _json(capsys, argv: list[str]):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_list_json_has_the_documented_fields(capsys) -> None:
    rows = _json(capsys, ["list", "--json"])
    assert len(rows) >= 40
    for row in rows:
        assert {"key", "name", "family", "reference_checkpoint", "params"} <= set(row)
        assert isinstance(row["params"], int) and row["params"] > 0
    assert {r["key"]: r["params"] for r in rows}["bert-base"] == 109_482_240


def test_inspect_json_components_sum_and_tree_nodes(capsys) -> None:
    out = _json(capsys, ["inspect", "albert-base", "--json"])
    assert sum(out["components"].values()) == out["params"] == out["tree"]["params"]
    node = out["tree"]
    assert {"name", "type", "params", "children"} <= set(node)
    assert any("used 12x" in s for s in out["shared_blocks"])


def test_inspect_a_config_file(tmp_path, capsys) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2,
                                "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 1000}))
    out = _json(capsys, ["inspect", str(path), "--json"])
    assert sum(out["components"].values()) == out["params"]


def test_compare_csv(capsys) -> None:
    assert main(["compare", "bert-base", "gpt2", "--csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("key,name,family") and len(lines) == 3


@pytest.mark.parametrize("argv,needle", [
    (["inspect", "no-such-model"], "Unknown variant"),
    (["inspect", "missing/config.json"], "No such file"),
    (["compare"], "required"),
    (["inspect", "bert-base", "--seq-len", "0"], "--seq-len"),
])
def test_bad_arguments_exit_non_zero_with_one_line(argv: list[str], needle: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(main(argv))
    assert exit_info.value.code != 0
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1


def test_invalid_config_file_in_a_real_process(tmp_path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"model_type": "bert", "hidden_size": 100, "num_attention_heads": 3}')
    proc = subprocess.run([sys.executable, "-m", "explorer", "inspect", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error:") and len(proc.stderr.strip().splitlines()) == 1


def test_compare_takes_any_number_of_variants(capsys) -> None:
    from explorer.cli import main

    keys = ["bert-base", "roberta-base", "gpt2", "gpt", "distilbert", "tinybert", "albert-base", "electra-small",
            "electra-base", "mobilebert", "t5-small", "bart-base", "xlm"]  # 13: more than the page shows
    assert main(["compare", *keys, "--csv"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == len(keys) + 1


def test_a_command_registers_only_the_areas_up_to_its_own() -> None:
    # `compare` lives in the first area: the other areas (some import torch) are never imported
    code = ("import sys; from explorer.cli import build_parser; p = build_parser('compare'); "
            "print(sorted(m for m in sys.modules if m.startswith('explorer.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    # argtypes and textinput (every command's text arguments): no torch
    assert out.strip() == "['explorer.cli.architecture', 'explorer.cli.argtypes', 'explorer.cli.textinput']"


def test_help_and_unknown_commands_still_list_every_area(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["no-such-command"])
    err = capsys.readouterr().err
    assert "compare" in err and "generate" in err and "mechanism" in err


def test_a_warm_compare_imports_neither_torch_nor_pandas(tmp_path) -> None:
    # the first run stores each variant's entry; the second reads them and prints the table
    code = ("import sys; from explorer.cli import main; main(['compare', 'bert-base', 'gpt2']); "
            "print(sorted(m for m in ('torch', 'transformers', 'pandas') if m in sys.modules))")
    env = {**os.environ, "EXPLORER_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert runs[0].splitlines()[-1] == "['torch', 'transformers']"
    assert runs[1].splitlines()[-1] == "[]"
    assert runs[0].splitlines()[:-1] == runs[1].splitlines()[:-1]  # same table from the store
    assert "bert-base" in runs[1] and "109482240" in runs[1]


@pytest.mark.parametrize("content,needle", [
    ('{"model_type": "t5", "num_decoder_layers": 1000000}', "num_decoder_layers"),
    ('{"model_type": "bert", "hidden_size": 1000000000001, "num_attention_heads": 2}', "hidden_size"),
    ('{"model_type": "albert", "num_hidden_groups": 0}', "num_hidden_groups"),
    ('{"model_type": "bert", "hidden_size": 1' + "0" * 5000 + "}", "digits"),
    ("[" * 10000 + "]" * 10000, "nest"),
    ('{"model_type": "bert", "pad": "' + "x" * 2_000_000 + '"}', "larger than"),
    ("not json", "JSON"),
])
def test_hostile_config_files_are_one_line(tmp_path, capsys, content: str, needle: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(content)
    assert main(["inspect", str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert needle.lower() in err.lower(), err
