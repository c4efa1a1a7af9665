"""The package's shape, checked: no import cycle (function-level imports included), no module or page
over its size, the library never imports streamlit, no machine's absolute path in the repository.

These are the rules CONTRIBUTING states; a new module that breaks one fails here with its name.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 400
MAX_PAGE_LINES = 150


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((ROOT / "explorer").rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def _imports(path: Path, known: dict[str, Path]) -> set[str]:
    """Every explorer module ``path`` imports, at the top or inside a function."""

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        found |= {m for m in map(resolve, names) if m}
    return found


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan).

    >>> import_cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}})
    [['a', 'b']]
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_no_import_cycle_in_the_library() -> None:
    known = _modules()
    graph = {name: _imports(path, known) - {name} for name, path in known.items()}
    assert import_cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert import_cycles({"x": {"y"}, "y": {"z"}, "z": {"x"}, "w": set()}) == [["x", "y", "z"]]


def test_no_library_module_over_its_size() -> None:
    big = {n: len(p.read_text(encoding="utf-8").splitlines()) for n, p in _modules().items()}
    assert {n: lines for n, lines in big.items() if lines > MAX_MODULE_LINES} == {}


def test_pages_stay_thin() -> None:
    pages = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "pages").glob("*.py")}
    assert pages and {n: lines for n, lines in pages.items() if lines > MAX_PAGE_LINES} == {}


def test_the_library_never_imports_streamlit() -> None:
    known = _modules()
    users = [n for n, p in known.items()
             if re.search(r"^\s*(import streamlit|from streamlit)", p.read_text(encoding="utf-8"), re.M)]
    assert users == []


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs the git checkout to list tracked files")
def test_no_machine_path_in_the_repository() -> None:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    # /root/.ssh is not a machine's path but a hostile input the fence tests type on purpose
    pattern = re.compile(r"(?<![\w.])/(?:work|root(?!/\.ssh)|home/\w+|Users/\w+)/")
    hits = []
    for name in files:
        path = ROOT / name
        if path.suffix not in {".py", ".md", ".toml", ".txt", ".json", ".cfg", ".sh", ".yml", ""} or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        hits += [f"{name}: {m.group(0)}" for m in pattern.finditer(text)]
    assert hits == []
