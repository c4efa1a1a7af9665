"""explorer.core.logs: the applications turn down third-party import noise, and only that."""

from __future__ import annotations

import logging
import subprocess
import sys

from explorer.core import logs
from tests.conftest import ROOT


def test_noisy_loggers_say_errors_only_and_others_are_untouched() -> None:
    before = {n: logging.getLogger(n).level for n in ("transformers", "transformer_explorer", "")}
    logs.quiet_imports()
    for name in logs.NOISY:
        lg = logging.getLogger(name)
        assert lg.getEffectiveLevel() == logging.ERROR and not lg.isEnabledFor(logging.WARNING)
        assert lg.isEnabledFor(logging.ERROR)  # a real failure still shows
    assert {n: logging.getLogger(n).level for n in before} == before


def test_the_cli_quiets_them_before_any_command_runs() -> None:
    code = ("import logging, sys; from explorer.cli import main; sys.argv = ['x', 'list']; "
            "main(['list']); print(logging.getLogger('torchao').level, logging.getLogger('torch.utils._pytree').level)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == f"{logging.ERROR} {logging.ERROR}"
