"""One home per rule: each rule that used to live in several places (and disagree) is defined once.

A second copy, even a correct one, fails here with the file that holds it, so the next change to the
rule cannot miss it. The homes:

- what users type for a blank, and the splitting of a text at its blanks: :mod:`explorer.core.userinput`;
- "does this load as a decoder?": :func:`explorer.runtime.modelkind.is_decoder`;
- "is this config an encoder-decoder?" and the field names of layer and head counts:
  :mod:`explorer.architecture.modeltypes`;
- token axis labels: :func:`explorer.core.labels.token_labels`;
- the ``EXPLORER_MODELS_DIR`` variable: :func:`explorer.runtime.fence.models_dir_env`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer.architecture.modeltypes import DECODER_LAYER_FIELDS, HEAD_FIELDS, LAYER_FIELDS

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("explorer",)
APP = ("app", "pages")


def _files(dirs: tuple[str, ...]) -> Iterator[tuple[str, ast.Module]]:
    for top in dirs:
        for path in sorted((ROOT / top).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the docstring constants (module, class, function): prose may name anything."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _strings(tree: ast.Module) -> Iterator[str]:
    """Every string constant of the code (docstrings left out; f-string pieces included)."""
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.value


def _definitions(name: str, dirs: tuple[str, ...] = LIBRARY + APP) -> list[str]:
    return [path for path, tree in _files(dirs) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name]


def _holders(test, dirs: tuple[str, ...] = LIBRARY) -> set[str]:
    """Files whose code has a string constant for which ``test`` is true."""
    return {path for path, tree in _files(dirs) if any(test(s) for s in _strings(tree))}


@pytest.mark.parametrize("name, home", [
    ("split_blanks", "explorer/core/userinput.py"),
    ("is_decoder", "explorer/runtime/modelkind.py"),
    ("is_encoder_decoder", "explorer/architecture/modeltypes.py"),
    ("num_layers", "explorer/architecture/modeltypes.py"),
    ("num_heads", "explorer/architecture/modeltypes.py"),
    ("token_labels", "explorer/core/labels.py"),
    ("models_dir_env", "explorer/runtime/fence.py"),
])
def test_each_rule_is_defined_once(name: str, home: str) -> None:
    assert _definitions(name) == [home]


def test_the_blank_markers_are_spelled_once() -> None:
    """The generic blank (``[MASK]``/``<mask>``/``___`` as a pattern) is only in core.userinput."""
    spelled = _holders(lambda s: "_{3," in s or "\\[mask\\]" in s.lower())
    assert spelled == {"explorer/core/userinput.py"}


def test_the_blank_caps_have_one_name_each() -> None:
    """No module-level ``MAX_BLANKS`` any more: each caller's cap is named for the model that needs it."""
    caps = {path: [t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) for t in node.targets
                   if isinstance(t, ast.Name) and t.id.endswith("MAX_BLANKS")]
            for path, tree in _files(LIBRARY)}
    assert {p: c for p, c in caps.items() if c} == {"explorer/tasks/infill.py": ["SEQ2SEQ_MAX_BLANKS"],
                                                    "explorer/tasks/causal/fill.py": ["DECODER_MAX_BLANKS"]}


def test_layer_and_head_field_names_are_listed_once() -> None:
    """The spellings only a field list needs (GPT-2's n_layer, BART's encoder_layers...) are in modeltypes
    alone, and no module reads a count with getattr/get itself."""
    rare = {"n_layer", "n_head", "encoder_layers", "encoder_attention_heads"}
    assert _holders(lambda s: s in rare) == {"explorer/architecture/modeltypes.py"}
    fields = set(LAYER_FIELDS) | set(DECODER_LAYER_FIELDS) | set(HEAD_FIELDS)
    reads = []
    for path, tree in _files(LIBRARY):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and len(node.args) >= 1 and (
                    (isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2)
                    or (isinstance(node.func, ast.Attribute) and node.func.attr == "get")):
                key = node.args[1] if isinstance(node.func, ast.Name) else node.args[0]
                if isinstance(key, ast.Constant) and key.value in fields:
                    reads.append(f"{path}:{node.lineno} reads {key.value!r}")
    assert reads == []


def test_the_encoder_decoder_flag_is_read_once() -> None:
    assert _holders(lambda s: s == "is_encoder_decoder") == {"explorer/architecture/modeltypes.py"}


def test_the_catalog_has_no_decoder_rule_of_its_own() -> None:
    from explorer.architecture import catalog

    assert not hasattr(catalog, "is_decoder")  # modelkind.is_decoder answers for keys and folders alike


def test_the_models_dir_variable_is_read_once_in_the_library() -> None:
    assert _holders(lambda s: s == "EXPLORER_MODELS_DIR") == {"explorer/runtime/fence.py"}


def test_the_models_dir_variable_is_read_once_in_the_app_too() -> None:
    assert _holders(lambda s: s == "EXPLORER_MODELS_DIR", LIBRARY + APP) == {"explorer/runtime/fence.py"}
