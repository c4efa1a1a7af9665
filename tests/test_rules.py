"""One home per rule: each rule that several places need (and copies of which could disagree) is defined once.

A second copy, even a correct one, fails here with the file that holds it, so the next change to the
rule cannot miss it. The homes:

- what users type for a blank, and the splitting of a text at its blanks: :mod:`explorer.core.userinput`;
- "does this load as a decoder?": :func:`explorer.runtime.modelkind.is_decoder`, and the loading task a page uses
  for a model: :meth:`explorer.runtime.resolve.ModelRef.task` and, for a page that asks any family for tokens,
  :meth:`~explorer.runtime.resolve.ModelRef.head_task`; the probe of Apple's MPS:
  :func:`explorer.runtime.placement.mps_available`;
- "is this config an encoder-decoder?" and the field names of layer and head counts:
  :mod:`explorer.architecture.modeltypes`;
- where a model's weights are: :func:`explorer.runtime.weights.locate`, called by the resolver
  (:func:`explorer.runtime.resolve.resolve`, whose :class:`~explorer.runtime.resolve.ModelRef` is the one handle
  pages, commands and tasks pass down) and the loader alone;
- token axis labels: :func:`explorer.core.labels.token_labels`;
- every ``EXPLORER_*`` environment variable: :mod:`explorer.core.settings` (and ``EXPLORER_MODELS_DIR`` is read
  through it by :func:`explorer.runtime.fence.models_dir_env` alone);
- every cap on a text's length in characters: :mod:`explorer.core.limits`;
- every share of memory a bound is planned with: :mod:`explorer.core.memorypolicy`.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from explorer.architecture.modeltypes import DECODER_LAYER_FIELDS, HEAD_FIELDS, LAYER_FIELDS

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("explorer",)
APP = ("app", "pages")


def _files(dirs: tuple[str, ...]) -> Iterator[tuple[str, ast.Module]]:
    for top in dirs:
        yield from _parsed(top)


@functools.cache
def _parsed(top: str) -> tuple[tuple[str, ast.Module], ...]:
    """Every module under ``top``, parsed once for all the rules (the trees are only read)."""
    return tuple((path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
                 for path in sorted((ROOT / top).rglob("*.py")))


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
    ("head_task", "explorer/runtime/resolve.py"),
    ("predicts_tokens", "explorer/runtime/resolve.py"),
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


def test_the_models_dir_variable_is_named_once_in_the_library() -> None:
    assert _holders(lambda s: s == "EXPLORER_MODELS_DIR") == {"explorer/core/settings.py"}


def test_the_models_dir_variable_is_named_once_in_the_app_too() -> None:
    assert _holders(lambda s: s == "EXPLORER_MODELS_DIR", LIBRARY + APP) == {"explorer/core/settings.py"}
    readers = {path for path, tree in _files(LIBRARY + APP) for node in ast.walk(tree)
               if isinstance(node, ast.Attribute) and node.attr == "MODELS_DIR"
               and isinstance(node.value, ast.Name) and node.value.id == "settings"}
    assert readers == {"explorer/runtime/fence.py"}  # everyone else asks fence.models_dir_env


def test_every_download_goes_through_the_one_that_does_not_rerun_the_page() -> None:
    """``app.ui.download`` (``on_click="ignore"``) is the only caller of ``download_button``: Streamlit's default
    reruns the whole page beside each download."""
    callers = {path for path, tree in _files(APP) for node in ast.walk(tree)
               if isinstance(node, ast.Attribute) and node.attr == "download_button"}
    assert callers == {"app/ui.py"}


SETTINGS_HOME = "explorer/core/settings.py"
# The Lab's scheduler, new in another change, still reads EXPLORER_LAB_* itself; it moves to settings.LAB_* there.
# The second assertion of the test below fails once it reads none itself: then remove it from here.
_MAPPING_READS = {"get", "setdefault", "pop", "getenv"}


def _is_environ(node: ast.AST) -> bool:
    """``os.environ`` or a bare ``environ``."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or \
        (isinstance(node, ast.Name) and node.id == "environ")


def _explorer_names(trees: list[tuple[str, ast.Module]]) -> set[str]:
    """Constants anywhere that hold an ``EXPLORER_*`` name (``ENV = "EXPLORER_..."``): reading by them counts."""
    return {t.id for _, tree in trees for node in ast.walk(tree) if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and str(node.value.value).startswith("EXPLORER_")
            for t in node.targets if isinstance(t, ast.Name)}


def _environ_reads(tree: ast.Module, constants: set[str]) -> list[int]:
    """Lines that look an ``EXPLORER_*`` name up in the environment (or any mapping: ``env.get("EXPLORER_X")``),
    or in ``os.environ`` through a helper's parameter that some call here passes an ``EXPLORER_*`` name."""
    def explorer_key(key: ast.AST | None) -> bool:
        return (isinstance(key, ast.Constant) and str(key.value).startswith("EXPLORER_")) or \
            (isinstance(key, ast.Name) and key.id in constants) or \
            (isinstance(key, ast.Attribute) and key.attr in constants)

    lines, helpers = [], {}  # helpers: function name -> position of the parameter it reads os.environ by
    for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        params = [a.arg for a in func.args.args]
        for node in ast.walk(func):
            key = _looked_up(node)
            if key is not None and _on_environ(node) and isinstance(key, ast.Name) and key.id in params:
                helpers[func.name] = params.index(key.id)
    for node in ast.walk(tree):
        key = _looked_up(node)
        if key is not None and explorer_key(key):
            lines.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers:
            at = helpers[node.func.id]
            if len(node.args) > at and explorer_key(node.args[at]):
                lines.append(node.lineno)
    return sorted(set(lines))


def _looked_up(node: ast.AST) -> ast.AST | None:
    """The key of a mapping lookup: ``m.get(k)``, ``m.setdefault(k, v)``, ``m.pop(k)``, ``getenv(k)``, ``m[k]``,
    ``k in m``."""
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "settings":
            return None  # settings.get("EXPLORER_X"): the one way
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return node.args[0] if name in _MAPPING_READS else None
    if isinstance(node, ast.Subscript):
        return node.slice
    if isinstance(node, ast.Compare) and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
        return node.left
    return None


def _on_environ(node: ast.AST) -> bool:
    if isinstance(node, ast.Call):
        func = node.func
        return (isinstance(func, ast.Attribute) and (_is_environ(func.value) or func.attr == "getenv")) or \
            (isinstance(func, ast.Name) and func.id == "getenv")
    if isinstance(node, ast.Subscript):
        return _is_environ(node.value)
    return isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators)


def test_only_settings_reads_explorer_variables_from_the_environment() -> None:
    trees = list(_files(LIBRARY + APP))
    constants = _explorer_names(trees)
    reads = {path: lines for path, tree in trees if path != SETTINGS_HOME
             and (lines := _environ_reads(tree, constants))}
    assert reads == {}, "read EXPLORER_* variables through explorer.core.settings (declare a new one there)"


def test_the_rule_sees_every_way_of_reading() -> None:
    code = ast.parse(
        "import os\nENV = 'EXPLORER_A'\n"
        "def f(env):\n    return env.get('EXPLORER_B')\n"
        "def g():\n    return os.environ[ENV], os.getenv('EXPLORER_C'), 'EXPLORER_D' in os.environ\n"
        "def _num(name):\n    return os.environ.get(name, '')\n"
        "def h():\n    return _num('EXPLORER_E'), os.environ.get('HOME'), _num('HOME')\n"
        "def k():\n    return settings.get('EXPLORER_F')\n")
    assert _environ_reads(code, _explorer_names([("x", code)])) == [4, 6, 10]


def _numbers_in(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, int | float) and not isinstance(n.value, bool)
               for n in ast.walk(node))


def _numbered_constants(home: str, named: Callable[[str], bool]) -> list[str]:
    """``path:line NAME`` of every constant ``named`` picks that is given a number outside its ``home`` module."""
    found = []
    for path, tree in _files(LIBRARY + APP):
        if path == home:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None and _numbers_in(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found += [f"{path}:{node.lineno} {t.id}" for t in targets if isinstance(t, ast.Name) and named(t.id)]
    return found


def test_text_length_caps_are_numbers_only_in_core_limits() -> None:
    """A ``*_CHARS`` cap with a number, or a ``max_chars=`` given a number, lives in explorer/core/limits.py."""
    found = _numbered_constants("explorer/core/limits.py", lambda name: name.endswith("_CHARS"))
    for path, tree in _files(LIBRARY + APP):
        if path != "explorer/core/limits.py":
            found += [f"{path}:{node.value.lineno} max_chars=" for node in ast.walk(tree)
                      if isinstance(node, ast.keyword) and node.arg == "max_chars" and _numbers_in(node.value)]
    assert found == []


# A share of some memory: MODEL_MEMORY_SHARE, MODEL_CACHE_SHARE, RESIDENT_SHARE, MEMORY_PLAN_SHARE, ...
_MEMORY_SHARE = re.compile(r"(MEMORY|CACHE|RESIDENT)\w*_SHARE$")


def test_memory_shares_are_numbers_only_in_the_memory_policy() -> None:
    """A ``*MEMORY*_SHARE`` (or cache, resident) constant with a number lives in explorer/core/memorypolicy.py."""
    assert _numbered_constants("explorer/core/memorypolicy.py", lambda name: bool(_MEMORY_SHARE.search(name))) == []


# Comments and docstrings say what the code does and why: a tracker's issue number or private notes mean
# nothing to a reader of the code. Only prose is read, so a string the code uses as data may name anything.
PROSE = LIBRARY + APP + ("tests", "benchmarks")
HISTORY = re.compile(r"\bissues?\s*#?\s*\d+|\bcheat[\s-]?sheets?\b", re.IGNORECASE)


def _prose(source: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of every comment and every string statement (module, class, function or attribute
    docstring)."""
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(source)):
        value = node.value if isinstance(node, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            yield node.lineno, value.value


def _history(source: str) -> list[str]:
    """``line: match`` for each issue number or private notes named in the prose of ``source``."""
    return sorted(f"{line + text[:m.start()].count(chr(10))}: {m.group()}"
                  for line, text in _prose(source) for m in HISTORY.finditer(text))


def test_comments_and_docstrings_name_no_issue_and_no_private_notes() -> None:
    found = {path.relative_to(ROOT).as_posix(): lines
             for top in PROSE for path in sorted((ROOT / top).rglob("*.py"))
             if (lines := _history(path.read_text(encoding="utf-8")))}
    assert found == {}, "say what the code does and why, not which issue or notes it came from"


def test_the_prose_rule_reads_comments_and_docstrings_but_not_data() -> None:
    source = ('"""Module."""\n'
              "X = 'issue 27'  # measured (Issue #25)\n"
              '"""X: from the cheat-sheet."""\n'
              "def f():\n"
              '    """Guards a loop.\n\n    Seen in issue 16."""\n'
              "    return 'cheat sheet', f'issue {X}'\n")
    assert _history(source) == ["2: Issue #25", "3: cheat-sheet", "7: issue 16"]


def _choices_of_a_loading_task(tree: ast.Module) -> list[int]:
    """Lines of a conditional expression that picks "causal-lm" or another loading task (``"causal-lm" if x else
    "masked-lm"``, either way round): choosing how a model loads from what kind it is."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.IfExp)
            and "causal-lm" in {getattr(side, "value", None) for side in (node.body, node.orelse)}]


def test_the_loading_task_is_chosen_in_one_place() -> None:
    """Whatever a function is called, choosing "causal-lm" for a decoder and another task for the rest happens in
    explorer.runtime.resolve.ModelRef.task alone; every page, cache and task asks it."""
    found = {path: lines for path, tree in _files(LIBRARY + APP) if (lines := _choices_of_a_loading_task(tree))}
    assert set(found) == {"explorer/runtime/resolve.py"}, found
    sample = ast.parse('t = "masked-lm" if enc else "causal-lm"\nu = "causal-lm" if dec else other\nv = a if b else c')
    assert _choices_of_a_loading_task(sample) == [1, 2]  # the rule sees both orders, and nothing else


WEIGHTS_MODULE = "explorer.runtime.weights"


def _locates(tree: ast.Module) -> list[int]:
    """Lines that reach :func:`explorer.runtime.weights.locate`: ``weights.locate`` as an attribute, or ``locate``
    imported from the weights module under any name (a ``locate`` of another module, such as an answer located in
    a context, is not it)."""
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "locate"
            and (getattr(node.value, "id", None) == "weights" or getattr(node.value, "attr", None) == "weights")
            or isinstance(node, ast.ImportFrom) and node.module == WEIGHTS_MODULE
            and any(a.name == "locate" for a in node.names)]


def test_only_the_resolver_and_the_loader_locate_weights() -> None:
    """A model is resolved once (explorer.runtime.resolve.resolve: a ModelRef knows where its weights are) and
    loaded from that ref (explorer.runtime.loading.load_model, which locates again only after converting the
    bundled decoder); every page, command, cache, task and benchmark passes the ref down instead of looking again."""
    found = {path: lines for path, tree in _files(LIBRARY + APP + ("benchmarks",))
             if path != "explorer/runtime/weights.py" and (lines := _locates(tree))}
    assert set(found) == {"explorer/runtime/resolve.py", "explorer/runtime/loading.py"}, found
    sample = ast.parse("from explorer.runtime.weights import locate as where\nweights.locate(k)\n"
                       "runtime.weights.locate(k)\nanswer.locate(a, b)\nlocate(a, b)")
    assert _locates(sample) == [1, 2, 3]  # every way in, and not another module's locate


def test_the_model_handle_has_no_second_copy() -> None:
    """``ModelRef`` is the one handle of a resolved model: the plan it replaced is named nowhere again."""
    from explorer.runtime import weights

    named = {f"{path}:{node.lineno}" for path, tree in _files(LIBRARY + APP + ("tests", "benchmarks"))
             for node in ast.walk(tree)
             if isinstance(node, ast.Name) and node.id == "LoadPlan"
             or isinstance(node, ast.Attribute) and node.attr == "LoadPlan"
             or isinstance(node, ast.ClassDef) and node.name == "LoadPlan"
             or isinstance(node, ast.alias) and node.name == "LoadPlan"}
    assert named == set() and not hasattr(weights, "LoadPlan") and not hasattr(weights, "plan")


def _mps_probes(tree: ast.Module) -> list[int]:
    """Lines that reach Apple's MPS backend (``torch.backends.mps`` by attribute, or by getattr with "mps")."""
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "mps"
            or isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr"
            and any(isinstance(a, ast.Constant) and a.value == "mps" for a in node.args)]


def test_mps_is_probed_in_one_place() -> None:
    """Every "auto" device choice and every device listing asks explorer.runtime.placement.mps_available, so no
    module can choose CUDA-or-CPU and forget Apple's GPU."""
    found = {path for path, tree in _files(LIBRARY + APP) if _mps_probes(tree)}
    assert found == {"explorer/runtime/placement.py"}
    assert _mps_probes(ast.parse('m = getattr(torch.backends, "mps", None)\nok = torch.backends.mps.is_available()'))


MAX_ANY_LINES = 232  # typed handles (explorer.core.handles) and JSON as dict[str, object] took it from 570


def test_any_does_not_grow_back_in_the_library() -> None:
    """Lines of ``explorer/`` naming ``Any`` (imports included) stay at most ``MAX_ANY_LINES``: a tokenizer is a
    ``explorer.core.handles.Tokenizer``, a model a ``torch.nn.Module`` or ``PreTrainedModel``, a JSON object whose
    values are not used typed a ``dict[str, object]``. Lower the number when it drops; never raise it."""
    pattern = re.compile(r"\bAny\b")
    lines = [f"{path.relative_to(ROOT).as_posix()}:{n}" for path in sorted((ROOT / "explorer").rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if pattern.search(line)]
    assert len(lines) <= MAX_ANY_LINES, f"{len(lines)} lines name Any (at most {MAX_ANY_LINES}): {lines[-20:]}"


def test_no_page_asks_whether_a_model_is_served() -> None:
    """A page holds backends and asks them all the same way (explorer.serving.backend, explorer.explain.anywhere,
    explorer.evaluation.scorer.scorer_of): no ``isinstance(..., Endpoint)`` nor ``isinstance(..., ModelRef)`` in
    app/ or pages/."""
    asks = [f"{path}:{node.lineno}" for path, tree in _files(APP) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
            and len(node.args) == 2 and any(k in ast.unparse(node.args[1]) for k in ("Endpoint", "ModelRef"))]
    assert asks == []
