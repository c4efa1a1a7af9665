"""Every CLI subcommand, every option, hostile values: exit 0 or 2, never a traceback, one line on error.

The commands and their options are read from the argparse parser itself, so a new command or option
is covered the moment it is registered. Each case starts from a cheap valid invocation (``BASE``,
tiny random models saved locally) and replaces one option's value with a hostile one: negative, zero,
huge, NaN, infinity, 1e-45, empty, 10,000 characters, unicode with a right-to-left override, HTML.
Numbers are refused at parse time (``explorer.cli.argtypes``); text reaches the library, which answers
with an ExplorerError or a result. Commands that build big random models (DeBERTa, the distillation
trio, ``prepare``) are marked slow.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import re
from pathlib import Path

import pytest

from explorer.cli import build_parser, main
from tests.tiny_gemma import save_tiny_gemma
from tests.tiny_models import save_tiny

HOSTILE = ("-1", "0", "99999999999999999999", "nan", "inf", "1e-45", "", "x" * 10_000,
           "\u202eé東京🙂\u0000"[:-1], "<script>alert(1)</script>")

EVALUATION = Path(__file__).resolve().parents[1] / "assets" / "evaluation"  # the bundled task files
# A cheap valid invocation per command: option -> value (a list for nargs="+"); "{bert}" etc. are the
# tiny models' directories. A command missing here still runs, with "x" for every required argument.
BASE: dict[str, dict[str, object]] = {
    "inspect": {"target": "bert-base", "--seq-len": "16"},
    "compare": {"keys": ["bert-base"], "--seq-len": "128"},
    "mask": {"strategy": "bert", "--text": "Hello world."},
    "tokenize": {"--text": "Hello", "--tokenizers": "gpt2"},
    "pattern": {"key": "bigbird", "--seq-len": "1024"},
    "attention": {"--model": "{bert}", "--text": "The cat sat."},
    "fill-mask": {"--models": "{bert}", "--text": "Paris is the [MASK] of France."},
    "download": {"keys": ["no-such-model"]},
    "prepare": {"--skip-decoder": True},
    "similarity": {"sentences": ["A cat.", "A dog."], "--model": "{bert_base}"},
    "speed": {"keys": ["bert-base", "distilbert"], "--runs": "1", "--seq-len": "8"},
    "generate": {"--model": "{gemma}", "--text": "Hello", "--max-new-tokens": "2"},
    "next-token": {"--model": "{gemma}", "--text": "Hello", "--top-k": "2"},
    "infill": {"--model": "{t5}", "--text": "Thank you ___ me.", "--max-new-tokens": "2"},
    "qa": {"--model": "{qa}", "--question": "Where?", "--context": "In Paris."},
    "colbert": {"--query": "A cat.", "sentences": ["A cat sat.", "Stocks fell."], "--model": "{bert_base}"},
    "mechanism deberta": {"key": "deberta-base", "--text": "Hi there."},
    "mechanism distillation": {"--text": "Hi there."},
    "mechanism t5": {"task": "cola"},
    "mechanism ctrl": {"code": "Links"},
    "mechanism m2m": {},
    "budget": {"keys": ["bert-base"]},
    "compress": {"model": "{bert_base}", "--method": "bf16", "--repeats": "1"},
    "pretrain": {"objective": "mlm", "--steps": "1", "--batch-tokens": "64", "--seq-len": "32", "--eval-windows": "2"},
    "pretrain-compare": {"objectives": ["mlm"], "--steps": "1", "--batch-tokens": "64", "--seq-len": "32",
                         "--eval-windows": "2"},
    "doctor": {"--no-sizes": True, "--no-probe": True},
    "endpoints": {"--no-probe": True},
    "serve": {"--dry-run": True, "--port": "8080"},  # serving runs until stopped: the check alone
    "lens": {"--model": "{gemma}", "--text": "Hello there", "--top-k": "2"},
    "forward": {"--model": "{gemma}", "--text": "Hello there"},
    "attribute": {"--model": "{gemma}", "--text": "Hello there", "--target": "world", "--method": "grad"},
    "tuned-lens train": {"--model": "{gemma}", "--steps": "1", "--windows": "1", "--seq-len": "8", "--heldout": "1",
                         "--out": "lens-out"},
    "evaluate": {"--model": "{gemma}", "--task": str(EVALUATION / "cloze.jsonl"), "--limit": "2"},
    "patch": {"--model": "{gemma}", "--clean": "The cat sat", "--corrupt": "The dog sat", "--target": " on",
              "--foil": " in"},
    "ablate": {"--model": "{gemma}", "--text": "Hello there", "--head": "0.0"},
    "steer": {"--model": "{gemma}", "--text": "Hello", "--positive": "good", "--negative": "bad", "--layer": "1",
              "--coefficient": "1", "--max-new-tokens": "2"},
    "project": {"--model": "{bert_base}", "--text-file": str(EVALUATION / "sentences.txt"), "--method": "pca"},
    "positions": {"--model": "gpt2", "--distance-max": "8"},
    "kv-cache": {"--model": "gpt2", "--context": "16"},
    "sae train": {"--model": "{gemma}", "--layer": "1", "--width": "16", "--k": "4", "--tokens": "1024",
                  "--seq-len": "16", "--heldout-tokens": "256", "--out": "sae-out"},
    "sae evaluate": {"--sae": "{sae}", "--model": "{gemma}", "--tokens": "256"},
    "sae features": {"--sae": "{sae}", "--model": "{gemma}", "--text": "Hello there"},
    "sae feature": {"--sae": "{sae}", "--model": "{gemma}", "--id": "0", "--tokens": "256"},
    "sae steer": {"--sae": "{sae}", "--model": "{gemma}", "--id": "0", "--value": "1", "--text": "Hello there"},
}
SLOW = {"mechanism deberta", "mechanism distillation", "prepare"}
# progress and notes may precede the one error line
PROGRESS = re.compile(r"^\s*\d+(\.\d+)?%\s|^note: |^(fill-mask|similarity): ")


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, its parser) for every runnable subcommand, nested ones included."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield " ".join(path), parser
        return
    for name, child in subs[0].choices.items():
        yield from _leaves(child, (*path, name))


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """Actions that take a value (flags and help take none)."""
    return [a for a in parser._actions if a.nargs != 0 and not isinstance(a, argparse._HelpAction)]


def _name(action: argparse.Action) -> str:
    return action.option_strings[-1] if action.option_strings else action.dest


def _cases():
    for command, parser in _leaves(build_parser()):
        marks = [pytest.mark.slow] if command in SLOW else []
        for action in _options(parser) or [None]:
            option = _name(action) if action else "(none)"
            yield pytest.param(command, option, marks=marks, id=f"{command}:{option}")


def _conflicting(parser: argparse.ArgumentParser, option: str) -> set[str]:
    """Options in a mutually exclusive group with ``option`` (left out of the base invocation)."""
    out: set[str] = set()
    for group in parser._mutually_exclusive_groups:
        names = {_name(a) for a in group._group_actions}
        if option in names:
            out |= names - {option}
    return out


def _argv(command: str, parser: argparse.ArgumentParser, option: str, value: str, dirs: dict[str, str]) -> list[str]:
    """The base invocation of ``command`` with ``option`` set to ``value`` (positionals after ``--``)."""
    base = {k: v for k, v in BASE.get(command, {}).items() if k not in _conflicting(parser, option)}
    for action in _options(parser):  # required arguments a new command may have: "x"
        needed = action.required or (not action.option_strings and action.nargs not in ("?", "*"))
        if needed and _name(action) not in base and _name(action) not in _conflicting(parser, option):
            base[_name(action)] = "x"
    fill = {k: ([v.format(**dirs) for v in val] if isinstance(val, list) else
                val.format(**dirs) if isinstance(val, str) else val) for k, val in base.items()}
    if option != "(none)":
        fill[option] = value
    optional, positional = [], []
    for action in _options(parser) + [a for a in parser._actions if a.nargs == 0]:
        name = _name(action)
        if name not in fill:
            continue
        val = fill[name]
        vals = val if isinstance(val, list) else [val]
        if not action.option_strings:
            positional += vals
        else:
            optional += [name] if val is True else [name, *vals]
    return [*command.split(), *optional, *(["--", *positional] if positional else [])]


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("hostile")
    return {"bert": str(save_tiny("bert", root / "bert")), "bert_base": str(save_tiny("bert-base", root / "bb")),
            "t5": str(save_tiny("t5", root / "t5")), "qa": str(save_tiny("distilbert-qa", root / "qa")),
            "gemma": str(save_tiny_gemma(root / "gemma")), "sae": str(_tiny_sae(root / "sae"))}


def _tiny_sae(place: Path) -> Path:
    """A TopK SAE in SAELens's layout on the tiny Gemma's residual stream after block 1 (32 wide, 16 features)."""
    import json

    import torch
    from safetensors.torch import save_file

    place.mkdir(parents=True)
    g = torch.Generator().manual_seed(0)
    (place / "cfg.json").write_text(json.dumps({
        "architecture": "topk", "d_in": 32, "d_sae": 16, "k": 4, "apply_b_dec_to_input": True,
        "normalize_activations": "none", "metadata": {"model_name": "tiny", "hook_name": "blocks.1.hook_resid_post"}}),
        encoding="utf-8")
    save_file({"W_enc": torch.randn(32, 16, generator=g), "W_dec": torch.randn(16, 32, generator=g),
               "b_enc": torch.zeros(16), "b_dec": torch.zeros(32)}, str(place / "sae_weights.safetensors"))
    return place


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own exit (our parser: exit 2 after one line)
            code = int(exc.code or 0)
    return code, err.getvalue()


@pytest.mark.parametrize(("command", "option"), list(_cases()))
def test_hostile_values_exit_cleanly(command: str, option: str, dirs, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # --npy / --models-dir values land in a scratch folder
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(tmp_path / "models"))
    parser = dict(_leaves(build_parser()))[command]
    values = HOSTILE if option != "(none)" else ("",)
    problems = []
    for value in values:
        argv = _argv(command, parser, option, value, dirs)
        code, err = _run(argv)  # an exception other than SystemExit fails the test with its traceback
        lines = [line for line in err.splitlines() if line.strip() and not PROGRESS.match(line)]
        shown = f"{command} {option}={value[:20]!r}"
        if code not in (0, 2):
            problems.append(f"{shown}: exit {code}")
        if "Traceback" in err:
            problems.append(f"{shown}: traceback on stderr")
        if code == 2 and len(lines) != 1:
            problems.append(f"{shown}: {len(lines)} lines on stderr: {err[:300]!r}")
        if any(len(line) > 600 for line in lines):
            problems.append(f"{shown}: a {max(map(len, lines))}-character error line (echoed input not cut)")
    assert not problems, "\n".join(problems)


def test_every_command_has_a_cheap_base_invocation() -> None:
    """A new command gets an entry in BASE (else its hostile runs start from "x" everywhere)."""
    commands = {c for c, _ in _leaves(build_parser())}
    assert commands - set(BASE) <= {"list", "models", "results"}, commands - set(BASE)


@pytest.mark.parametrize("argv", [
    ["results", "--benchmark", "{long}"],
    ["inspect", "{long}"],
    ["pattern", "{long}", "--seq-len", "64"],
    ["mask", "{long}", "--text", "Hello."],
    ["tokenize", "--text", "Hi", "--tokenizers", "{long}"],
    ["mechanism", "t5", "{long}"],
    ["mechanism", "ctrl", "{long}"],
    ["generate", "--model", "{long}", "--text", "Hi"],
    ["pattern", "bert-base", "--seq-len", "64", "--part", "{long}"],
    ["generate", "--model", "m", "--text", "Hi", "--temperature", "{long}"],
])
def test_a_10k_character_value_is_echoed_cut(argv: list[str]) -> None:
    """A 10,000-character value is echoed cut in the message, not whole (e.g. `results --benchmark <10k>`)."""
    long = "y" * 10_000
    code, err = _run([a.replace("{long}", long) for a in argv])
    assert code == 2 and "Traceback" not in err
    assert "y" * 81 not in err and "…" in err and len(err) < 600, err[:300]


def _valid_values(action: argparse.Action) -> list[str]:
    """Values ``action`` must accept: each of its choices, or the bounds of its :func:`explorer.cli.argtypes.number`
    (read from the parser's closure; a factory passed where its parser belongs, ``type=seed``, has none and is
    given "0", which it then refuses)."""
    if action.choices is not None:
        return [str(c) for c in action.choices]
    parse = action.type
    bounds = inspect.getclosurevars(parse).nonlocals if callable(parse) and getattr(parse, "__closure__", None) else {}
    if not {"kind", "lo", "hi"} <= set(bounds):
        return ["0"]
    kind, lo, hi = bounds["kind"], bounds["lo"], bounds["hi"]
    first = (lo + 1 if kind is int else (lo + hi) / 2) if bounds.get("lo_open") else lo
    return [str(kind(first)), str(kind(hi))]


def _typed(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options checked at parse time by :mod:`explorer.cli.argtypes`, or limited to choices."""
    return [a for a in _options(parser)
            if a.choices is not None or getattr(a.type, "__module__", None) == "explorer.cli.argtypes"]


@pytest.mark.parametrize("command", sorted({c for c, p in _leaves(build_parser()) if _typed(p)}))
def test_every_typed_option_parses_a_valid_value(command: str) -> None:
    """Each option of each command given a value it must accept parses through the real parser (parse only: no
    command runs), so a flag that refuses every value (``type=seed`` for ``type=seed()``) cannot ship."""
    parser = dict(_leaves(build_parser()))[command]
    fake = {"bert": "b", "bert_base": "bb", "t5": "t5", "qa": "qa", "gemma": "g", "sae": "s"}  # never read: parse only
    problems = []
    for action in _typed(parser):
        for value in _valid_values(action):
            argv = _argv(command, parser, _name(action), value, fake)
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err):
                    build_parser(argv[0]).parse_args(argv)
            except SystemExit:
                problems.append(f"{command} {_name(action)} {value!r}: {err.getvalue().strip()}")
    assert not problems, "\n".join(problems)
