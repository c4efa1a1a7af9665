"""Hostile files and folders, checked before any work (tests/test_cli_hostile.py covers hostile values).

Input files must be regular files: a FIFO as ``--text-file`` would block forever, ``/dev/zero`` would be
read up to the size cap; a socket or a directory is refused too, each by name and at once. Text becomes
training windows by its words, not its lines: split by lines, a 4.7 MB text on one line builds the model
and then says "The text gives no training windows" (its only paragraph goes to the held-out part). Every
output folder is probed (a file created and removed) before a model is built, so ``--out /proc/self/x``
is refused before training, not after it.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import threading

import pytest

from explorer.cli import main
from explorer.core import userfiles
from explorer.core.errors import ExplorerError
from explorer.training import corpus, trainer

TINY = ["--steps", "1", "--batch-tokens", "64", "--seq-len", "32", "--eval-windows", "2", "--device", "cpu"]


def _run(argv: list[str], seconds: float = 60) -> tuple[int, str, str]:
    """``main(argv)`` in a thread: a command that blocks (a FIFO read) fails the test instead of hanging it."""
    result: dict[str, object] = {}
    out, err = io.StringIO(), io.StringIO()

    def go() -> None:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                result["code"] = main(argv)
            except SystemExit as stop:
                result["code"] = int(stop.code or 0)
    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{' '.join(argv)} still running after {seconds} s"
    return int(result["code"]), out.getvalue(), err.getvalue()  # type: ignore[call-overload]


@pytest.fixture
def no_training(monkeypatch):
    monkeypatch.setattr(trainer, "start", lambda *a, **k: pytest.fail("a model was built"))


@pytest.fixture
def special_files(tmp_path):
    fifo = tmp_path / "fifo.txt"
    os.mkfifo(fifo)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "socket.txt"))
    yield {"FIFO": (str(fifo), "a named pipe (FIFO)"), "ZERO": ("/dev/zero", "a character device"),
           "SOCKET": (str(tmp_path / "socket.txt"), "a socket"), "DIR": (str(tmp_path), "a directory")}
    sock.close()


@pytest.mark.parametrize("kind", ["FIFO", "ZERO", "SOCKET", "DIR"])
def test_a_text_file_that_is_not_a_regular_file_is_refused_at_once(kind, special_files, no_training) -> None:
    path, said = special_files[kind]
    code, _, err = _run(["pretrain", "mlm", *TINY, "--text-file", path], seconds=60)  # a FIFO read would hang
    assert code == 2 and len(err.strip().splitlines()) == 1 and said in err and "Traceback" not in err, err
    with pytest.raises(ExplorerError, match="not a regular file|is a directory"):  # every reader of user files
        userfiles.read_path(path, 100, "The file")


def test_a_fifo_elsewhere_is_refused_too(special_files) -> None:
    """The CLI's shared text-file reader (fill-mask, attention, tokenize... --text-file) uses the same check."""
    from explorer.cli.textinput import read_text_file

    with pytest.raises(ExplorerError, match=r"named pipe \(FIFO\)"):
        read_text_file(special_files["FIFO"][0], "--text-file")


def test_a_text_on_one_line_is_split_by_its_words(tmp_path, capsys) -> None:
    """~100,000 distinct words on one line (0.7 MB; the reported text: 4.7 MB): 95% trains, 5% is held out."""
    line = " ".join(f"word{i} sits near item{i % 97} today." for i in range(25_000))
    text = corpus.from_text(line, "one line")
    assert text.train and text.heldout and 0.9 < text.train_words / text.words < 0.99
    (tmp_path / "one-line.txt").write_text(line)
    code, out, err = _run(["pretrain", "mlm", *TINY, "--text-file", str(tmp_path / "one-line.txt"), "--out",
                           str(tmp_path / "run"), "--json"])
    assert code == 0, err
    assert '"train_documents": 0' not in out and (tmp_path / "run" / "lab.json").is_file()


def test_a_text_without_windows_is_refused_before_the_model_is_built(monkeypatch) -> None:
    from explorer.training import batches, lossfamilies

    monkeypatch.setattr(batches, "windows", lambda *a: ())
    monkeypatch.setitem(lossfamilies.FAMILIES, "mlm", lossfamilies.LossFamily(
        lossfamilies.FAMILIES["mlm"].features, lossfamilies.FAMILIES["mlm"].loss, lambda *a, **k: pytest.fail("built")))
    with pytest.raises(ExplorerError, match="gives no training windows of 32 tokens"):
        trainer.start(trainer.Plan("mlm", steps=1, batch_tokens=64, seq_len=32), corpus.bundled())


@pytest.mark.parametrize("out", ["/proc/self/x", "/proc/self/new/deeper", "FILE/x"])
def test_an_unwritable_out_folder_is_refused_before_training(out, tmp_path, no_training) -> None:
    (tmp_path / "file").write_text("a file, not a folder")
    out = out.replace("FILE", str(tmp_path / "file"))
    code, _, err = _run(["pretrain", "mlm", *TINY, "--out", out])
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "Cannot write the checkpoint" in err and "Name another --out folder" in err, err
    assert (tmp_path / "file").read_text() == "a file, not a folder"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no probe file left behind


def test_pretrain_compare_save_probes_the_models_folder_first(tmp_path, no_training) -> None:
    (tmp_path / "models").write_text("a file where the models folder should be")
    code, _, err = _run(["pretrain-compare", "mlm", "roberta", *TINY, "--save", "--models-dir",
                         str(tmp_path / "models")])
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
