"""``--device`` / ``--dtype`` on every live CLI command (explorer.cli.add_placement / placement_of)."""

from __future__ import annotations

import json

import pytest
import torch

from explorer.cli import build_parser, main

# Every command that runs a model, with arguments that would otherwise be valid.
LIVE = {
    "fill-mask": ["fill-mask", "--models", "bert-base", "--text", "The [MASK] sat."],
    "similarity": ["similarity", "a", "b"],
    "attention": ["attention", "--model", "sentence-bert", "--text", "The cat sat."],
    "next-token": ["next-token", "--model", "gemma3-270m", "--text", "The"],
    "generate": ["generate", "--model", "gemma3-270m", "--text", "The"],
    "speed": ["speed", "bert-base", "distilbert"],
    "mechanism deberta": ["mechanism", "deberta", "deberta-v3-base"],
}


def _run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as stop:  # argparse's own errors (bad flag values) exit from parse_args
        return int(stop.code)


@pytest.mark.parametrize("name", LIVE)
def test_every_live_command_takes_the_flags(name: str) -> None:
    args = build_parser(LIVE[name][0]).parse_args([*LIVE[name], "--device", "CPU", "--dtype", "bf16"])
    assert (args.device, args.dtype) == ("cpu", "bfloat16")  # names normalised by explorer.runtime.placement
    args = build_parser(LIVE[name][0]).parse_args(LIVE[name])
    assert (args.device, args.dtype) == (None, None)  # auto, without importing torch at parse time


@pytest.mark.parametrize("name", LIVE)
@pytest.mark.parametrize(("flag", "value", "says"), [
    ("--device", "tpu", "Unknown device 'tpu'"), ("--dtype", "float8", "Unknown dtype 'float8'"),
    ("--device", "x" * 500, "..."),
])
def test_bad_values_exit_2_with_one_line(name, flag, value, says, capsys) -> None:
    assert _run([*LIVE[name], flag, value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and len(err[0]) < 300


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without CUDA")
@pytest.mark.parametrize("name", ["fill-mask", "similarity", "attention", "speed", "mechanism deberta"])
def test_missing_gpu_and_float16_on_cpu_exit_2_before_loading(name, capsys) -> None:
    assert _run([*LIVE[name], "--device", "cuda"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: cuda is not available here")
    assert _run([*LIVE[name], "--device", "cpu", "--dtype", "float16"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "float16 on the CPU" in err[0]


def test_fill_mask_json_says_what_ran(tmp_path, capsys) -> None:
    from tests.tiny_models import save_tiny

    path = save_tiny("bert", tmp_path / "bert")
    assert main(["fill-mask", "--models", str(path), "--text", "The [MASK] sat.", "--device", "cpu",
                 "--dtype", "bfloat16", "--json"]) == 0
    [col] = json.loads(capsys.readouterr().out)["models"]
    assert (col["device"], col["device_name"], col["dtype"]) == ("cpu", "cpu", "bfloat16")
    assert main(["fill-mask", "--models", str(path), "--text", "The [MASK] sat.", "--device", "cpu"]) == 0
    assert "[cpu · float32," in capsys.readouterr().out


def test_mechanism_deberta_runs_in_bf16_and_says_so(capsys) -> None:
    assert main(["mechanism", "deberta", "deberta-v3-base", "--text", "The cat sat.", "--device", "cpu",
                 "--dtype", "bfloat16", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["device"], out["dtype"]) == ("cpu", "bfloat16")
    assert out["max_prob_error"] < 0.05  # the split still holds, to bfloat16's rounding


def test_speed_json_says_what_ran(capsys) -> None:
    assert main(["speed", "tinybert", "sentence-bert", "--runs", "1", "--seq-len", "8", "--device", "cpu",
                 "--dtype", "bfloat16", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["device"], out["device_name"], out["dtype"]) == ("cpu", "cpu", "bfloat16")
