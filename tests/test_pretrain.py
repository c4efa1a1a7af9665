"""explorer.cli.pretrain: ``pretrain`` and ``pretrain-compare`` (tiny runs), Ctrl-C, and bad input (exit 2, one line).

The JSON's key structure is pinned by tests/golden/cli/pretrain-keys.json (values vary between machines:
the golden holds each key's type; a missing file fails).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.training import checkpoint, trainer

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--steps", "20", "--batch-tokens", "256", "--seq-len", "32", "--eval-windows", "4", "--device", "cpu"]


def shape(value: Any) -> Any:
    """The key structure of a JSON value: dicts keep their keys, lists their first item's shape, leaves their type."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return "number" if isinstance(value, int | float) and not isinstance(value, bool) else type(value).__name__


def test_pretrain_json_trains_saves_and_reports(tmp_path, golden, capsys) -> None:
    out = tmp_path / "run"
    assert main(["pretrain", "mlm", *TINY, "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    golden("cli/pretrain-keys.json", json.dumps(shape(summary), indent=1) + "\n")
    assert (summary["objective"], summary["size"], summary["steps"], summary["out"]) == ("mlm", "tiny", 20, str(out))
    assert [s for s, _ in summary["losses"]] == list(range(1, 21)) and summary["tokens_seen"] >= 20 * 200
    assert summary["eval"]["last"]["loss"] < summary["eval"]["first"]["loss"]  # it learns
    assert checkpoint.load_card(out) == summary  # the saved lab.json is the printed summary
    progress = [ln for ln in captured.err.splitlines() if ln.startswith("step ")]
    assert len(progress) == 20 and all(w in progress[-1] for w in ("step 20/20", "loss", "tokens", "elapsed", "ETA"))


def test_pretrain_defaults_to_the_models_folder_and_says_how_to_use_it(tmp_path, capsys) -> None:
    args = ["--steps", "3", "--batch-tokens", "64", "--seq-len", "32", "--eval-windows", "2", "--device", "cpu"]
    assert main(["pretrain", "roberta", *args, "--models-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "lab" / "roberta-tiny-3steps-seed0" / "lab.json").is_file()
    assert "held-out loss" in out and f"--models lab/roberta-tiny-3steps-seed0 --models-dir {tmp_path}" in out


def test_pretrain_compare_runs_each_objective_on_the_same_budget() -> None:
    """In a process of its own, as a user runs it: in the suite's process an earlier test's background job (a Lab
    run, a tuned lens) may still hold the training slots this command's runs share."""
    args = ["--steps", "3", "--batch-tokens", "128", "--seq-len", "32", "--eval-windows", "2", "--device", "cpu"]
    done = subprocess.run([sys.executable, "-m", "explorer", "pretrain-compare", "mlm", "roberta", "mlm", *args,
                           "--no-probe", "--json"], capture_output=True, text=True, timeout=900,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr[-2000:]
    runs = json.loads(done.stdout)
    assert [r["objective"] for r in runs] == ["mlm", "roberta"]  # each once
    assert all(r["steps"] == 3 and r["out"] is None and shape(r) == shape(runs[0]) for r in runs), [
        (r["steps"], r["out"], shape(r)) for r in runs]
    assert all(128 * 3 * 0.75 <= r["tokens_seen"] <= 128 * 3 for r in runs)  # the same token budget


def test_the_probe_fine_tunes_a_copy_and_reports_its_accuracy(tmp_path, capsys, monkeypatch) -> None:
    from explorer.training import downstream

    spec = downstream.ProbeSpec(steps=3, batch=8, seq_len=32, test_examples=16)
    monkeypatch.setattr(downstream, "DEFAULT_SPEC", spec)
    args = ["--steps", "2", "--batch-tokens", "128", "--seq-len", "32", "--eval-windows", "2", "--device", "cpu"]
    assert main(["pretrain", "mlm", *args, "--out", str(tmp_path / "run"), "--probe", "--json"]) == 0
    out = capsys.readouterr()
    result = json.loads(out.out)["eval"]["probe"]
    assert result["task"] == downstream.TASK and 0.0 <= result["accuracy"] <= 1.0 and result["n_test"] == 16
    assert "probing" in out.err


@pytest.mark.parametrize("interrupt", ["advance", "save"])
def test_ctrl_c_stops_cleanly_with_exit_130(interrupt, tmp_path, monkeypatch, capsys) -> None:
    def stop(*_a, **_k):
        raise KeyboardInterrupt
    if interrupt == "advance":
        monkeypatch.setattr(trainer, "advance", stop)
    else:
        monkeypatch.setattr(checkpoint, "_fsync_tree", stop)  # mid-save: weights written, not yet renamed
    assert main(["pretrain", "mlm", *TINY, "--steps", "1", "--out", str(tmp_path / "run")]) == 130
    err = capsys.readouterr().err.strip()
    assert "interrupted (Ctrl-C)" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # no checkpoint, no temporary folder


def _default_sigint() -> None:
    """In the child, before exec: SIGINT back to its default. A process that ignores SIGINT passes that on to its
    children, and Python then installs no KeyboardInterrupt handler: earlier tests of the suite (a server run in
    the background) can leave pytest ignoring it, and the training would never see the Ctrl-C this test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_real_sigint_leaves_no_checkpoint(tmp_path) -> None:
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "pretrain", "mlm", *TINY, "--steps", "20000",
                             "--out", str(out)], cwd=ROOT, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"}, preexec_fn=_default_sigint)
    assert proc.stderr is not None
    seen: list[str] = []  # "preparing: ...", its heartbeat while the model is built (a busy machine), then training
    while not seen or "Ctrl-C stops" not in seen[-1] and seen[-1] and len(seen) < 200:
        seen.append(proc.stderr.readline())
    assert "Ctrl-C stops" in seen[-1], seen  # the model is built, steps are running
    for _ in range(6):  # as a person would, press Ctrl-C again if the first press is not seen within 10 s
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=10)
            break
        except subprocess.TimeoutExpired:
            continue
    else:
        proc.kill()
        raise AssertionError("six Ctrl-C presses did not stop the training")
    rest = proc.stderr.read()
    assert code == 130
    assert "interrupted (Ctrl-C)" in rest and "Traceback" not in rest
    assert list(tmp_path.iterdir()) == []


def _files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01\x02" * 1000)
    with open(tmp_path / "huge.txt", "wb") as fh:  # 1 GB, sparse: the reader stops after 20 MB
        fh.truncate(1 << 30)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    return {"EMPTY": "empty.txt", "BINARY": "binary.txt", "HUGE": "huge.txt", "MINE": "mine"}


BAD = [
    (["mlm", "--steps", "0"], "at least 1"),
    (["mlm", "--steps", "-1"], "at least 1"),
    (["mlm", "--steps", str(10**9)], "at most 20,000"),
    (["mlm", "--steps", "abc"], "whole number"),
    (["mlm", "--seed", "-3"], "at least 0"),
    (["mlm", "--batch-tokens", "20"], "Tokens per step"),
    (["nonsense"], "Unknown objective"),
    (["mlm", "--size", "huge"], "invalid choice"),
    (["mlm", "--text-file", "EMPTY"], "at least 2,000"),
    (["mlm", "--text-file", "BINARY"], "binary"),
    (["mlm", "--text-file", "HUGE"], "larger than"),
    (["mlm", "--text-file", "MISSING"], "No such file"),
    (["mlm", "--text-file", "MINE"], "is a directory"),
    (["mlm", "--out", "MINE"], "not a lab checkpoint"),
    (["mlm", "--device", "tpu"], "device"),
]


def _exit_code(argv: list[str]) -> int:
    """The command's exit code, whether argparse raised it (SystemExit) or the command returned it."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)


@pytest.mark.parametrize(("argv", "message"), BAD, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path, capsys) -> None:
    names = {**_files(tmp_path), "MISSING": "missing.txt"}
    argv = [str(tmp_path / names[a]) if a in names else a for a in argv]
    tiny = [] if "--steps" in argv else ["--steps", "2"]
    assert _exit_code(["pretrain", *argv, *tiny, "--seq-len", "32", "--eval-windows", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err, err
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"  # a refused --out is left alone


def test_cuda_without_cuda_is_refused(capsys) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert main(["pretrain", "mlm", "--device", "cuda", "--steps", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cuda is not available" in err


def test_compare_needs_two_objectives(capsys) -> None:
    assert main(["pretrain-compare", "mlm", "mlm", "--steps", "1"]) == 2
    assert "at least two" in capsys.readouterr().err


def test_pretrain_exits_trains_fastbert_exits_and_saves_them_with_the_checkpoint(tmp_path, capsys, monkeypatch) -> None:
    from explorer.training import exits
    from tests.conftest import QUICK_EXITS

    monkeypatch.setattr(exits, "DEFAULT_SPEC", exits.ExitSpec(**QUICK_EXITS))
    out = tmp_path / "run"
    assert main(["pretrain", "mlm", *TINY, "--out", str(out), "--exits", "--exit-steps", "3"]) == 0
    captured = capsys.readouterr()
    assert "exits: accuracy after each layer" in captured.out and "--method exit-0.2" in captured.out
    assert checkpoint.has_exits(out) and any(ln.startswith("exits: ") for ln in captured.err.splitlines())
    spec = exits.load(out, "cpu")[1]["spec"]  # --exit-steps: both stages, the rest of the spec as it was
    assert (spec["steps"], spec["distill_steps"], spec["batch"]) == (3, 3, QUICK_EXITS["batch"])
    assert main(["pretrain", "mlm", *TINY, "--out", str(out), "--json"]) == 0  # retrained: its old exits go
    assert "exits" not in json.loads(capsys.readouterr().out) and not checkpoint.has_exits(out)


def test_exit_steps_without_exits_is_refused_before_any_work(tmp_path, capsys) -> None:
    assert main(["pretrain", "mlm", *TINY, "--out", str(tmp_path / "run"), "--exit-steps", "5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "add --exits" in err and not (tmp_path / "run").exists()


def test_exits_on_a_one_layer_student_say_the_checkpoint_is_saved(tmp_path, capsys) -> None:
    out = tmp_path / "student"
    assert main(["pretrain", "distilbert", *TINY, "--out", str(out), "--exits"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "at least two layers" in err and "checkpoint itself is saved" in err
    assert checkpoint.load_card(out)["objective"] == "distilbert" and not checkpoint.has_exits(out)


# Run in a fresh interpreter: each refusal must come before torch or transformers is imported (a FIFO, a device and
# an unwritable folder are refused in a moment, not after the imports and the memory plan).
_REFUSALS = """
import json, sys
from explorer.cli import main
seen = []
for argv in json.loads(sys.argv[1]):
    rc = main(argv)
    seen.append([rc, sorted(m for m in ("torch", "transformers") if m in sys.modules)])
print(json.dumps(seen))
"""


def test_paths_are_refused_before_any_heavy_import(tmp_path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    cases = [["pretrain", "mlm", "--text-file", str(fifo)], ["pretrain", "mlm", "--text-file", "/dev/zero"],
             ["pretrain", "mlm", "--out", "/proc/self/x"], ["pretrain", "mlm", "--models-dir", "/proc/self/x"],
             ["pretrain-compare", "mlm", "roberta", "--text-file", str(fifo)],
             ["pretrain-compare", "mlm", "roberta", "--save", "--models-dir", "/proc/self/x"]]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-c", _REFUSALS, json.dumps(cases)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == [[2, []]] * len(cases), proc.stderr[-2000:]
    assert proc.stderr.count("error: ") == len(cases) and "Traceback" not in proc.stderr
