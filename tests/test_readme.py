"""The README's examples run: every ``python -m explorer ...`` line of its code blocks exits 0.

They run in-process through ``explorer.cli.main`` (as ``python -m explorer`` would, without paying the
interpreter and torch start-up per line). The ones that load the real Gemma 3 270M, convert it
(``prepare``), time models (``speed``) or ask a served model (``--endpoint``: the real engine stands in for it) are
marked slow, and still run in ``make test``. Commands quoted inline in the prose (``python -m explorer download
KEY``) carry placeholders or need the network: for those the sub-command must exist (its ``--help`` exits 0).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from explorer.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PREFIX = ["python", "-m", "explorer"]
SLOW = ("gemma3-270m", "prepare", "speed", "--endpoint", "assets/features")  # the shipped SAE reads the real Gemma


def block_commands(text: str) -> list[str]:
    """``python -m explorer`` lines inside fenced code blocks, trailing comments dropped."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    return [shlex.join(shlex.split(line, comments=True)) for line in lines if line.startswith("python -m explorer ")]


def inline_subcommands(text: str) -> set[str]:
    """Sub-commands quoted inline in the prose: `python -m explorer NAME ...`."""
    return set(re.findall(r"`python -m explorer ([a-z-]+)", text))


COMMANDS = block_commands(README)


def test_the_readme_has_examples_to_run():
    assert len(COMMANDS) >= 15
    assert any(" budget " in c for c in COMMANDS) and any(" results " in c for c in COMMANDS)


@pytest.mark.parametrize("command", [
    pytest.param(c, marks=pytest.mark.slow) if any(s in c for s in SLOW) else c for c in COMMANDS
], ids=lambda c: c[len("python -m explorer "):][:60])
def test_readme_command_exits_0(command: str, monkeypatch: pytest.MonkeyPatch, capsys, request) -> None:
    import torch

    monkeypatch.chdir(ROOT)  # paths in the examples are relative to the repository root
    argv = shlex.split(command)
    assert argv[:3] == PREFIX
    if "--endpoint" in argv:  # a served-model example: the real engine stands in for the README's big server
        engine = request.getfixturevalue("served_engine")
        monkeypatch.setenv("EXPLORER_ENDPOINT_URL", engine.endpoint.base_url)
        monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", argv[argv.index("--endpoint") + 1])
    if "--device cuda" in command and not torch.cuda.is_available():
        # A GPU example on a CPU-only machine: one line saying so and what to pick, exit 2 (not a traceback).
        assert main(argv[3:]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "cuda is not available" in err, err
        return
    assert main(argv[3:]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip()  # every example prints something


@pytest.mark.parametrize("name", sorted(inline_subcommands(README)))
def test_inline_subcommands_exist(name: str, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main([name, "--help"])
    assert stop.value.code == 0
    assert "usage" in capsys.readouterr().out


def test_every_make_target_the_docs_name_is_in_the_makefile() -> None:
    """`make run` is the README's first command: a Makefile edit once dropped its rule, and `make run` then said
    "Nothing to be done" (a .PHONY name without a rule) instead of starting the app."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    rules = set(re.findall(r"^([a-z][a-z-]*):", makefile, flags=re.M))
    docs = README + (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`make ([a-z][a-z-]*)", docs)) | set(re.findall(r"^make ([a-z][a-z-]*)", docs, flags=re.M))
    assert {"run", "test", "check"} <= named
    assert named - rules == set(), f"the docs name make targets the Makefile lacks: {sorted(named - rules)}"
    phony = set(re.search(r"^\.PHONY:(.*)$", makefile, flags=re.M).group(1).split())
    assert phony - rules == set(), f".PHONY names without a rule: {sorted(phony - rules)}"


def test_block_commands_parse_comments_and_quotes():
    text = '```bash\npython -m explorer tokenize --text "a # b" --json   # note\necho no\n```\n'
    assert block_commands(text) == ["python -m explorer tokenize --text 'a # b' --json"]


def test_the_readmes_counts_and_lists_are_those_of_the_data() -> None:
    """The README's counts (budgets, variants) and its variant list are those of the data: a stale count (20
    budgets where 23 are recorded) or a variant left out (Gemma 3 270M) fails."""
    import re

    from explorer.architecture import budgets, catalog

    text = README
    assert re.search(r"every variant in the catalog \((\d+):", text).group(1) == str(len(catalog.keys()))
    assert re.search(r"pretraining budgets of (\d+) variants", text).group(1) == str(len(budgets.budgets()))
    listed = re.search(r"every variant in the catalog \(\d+: (.*?)\) with parameters by year", text).group(1)
    listed = re.sub(r"[-() ]", "", listed.lower())
    families = {catalog.get_variant(k).name.split(" ")[0].split("-")[0].lower() for k in catalog.keys()}
    missing = {f for f in families if f not in listed}
    assert not missing, f"families the README's list leaves out: {missing}"
