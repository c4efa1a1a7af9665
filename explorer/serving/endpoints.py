"""Which served endpoints exist: the operator's list, and the ones typed on a private machine.

Whoever runs the explorer names the endpoints, in the environment or in a TOML file:

* ``EXPLORER_ENDPOINT_URL`` (the OpenAI base URL, e.g. ``http://127.0.0.1:8000/v1``), with
  ``EXPLORER_ENDPOINT_MODEL``, ``EXPLORER_ENDPOINT_NAME`` (default ``served``), ``EXPLORER_ENDPOINT_KEY_ENV`` (the
  *name* of the variable holding the API key) and ``EXPLORER_ENDPOINT_LABEL``: one endpoint;
* ``EXPLORER_ENDPOINTS_FILE``: a TOML file (at most 256 KB) with up to :data:`MAX_ENDPOINTS` ``[[endpoint]]``
  tables with the keys ``name``, ``base_url``, ``model``, ``api_key_env``, ``label``, ``timeout`` (seconds: the
  most one whole request may take) and ``max_concurrent``.

API keys are read from their variable at request time and never stored in an :class:`Endpoint`, a URL, a page,
a log line or a message: a URL that would carry one (``user:pass@``, ``?api_key=``, a key-like path part) is
refused, and the refusal quotes it without the secret (:func:`shown_url`). On a private machine a user may add an
endpoint by URL (the Models page, the CLI's ``--base-url``); when the app is shared (the path fence is on:
``make run ADDRESS=0.0.0.0``) a typed URL is refused unless it is one of the operator's, so no visitor can make
the server fetch an address of their choosing.

>>> parse_url("http://127.0.0.1:8080")
'http://127.0.0.1:8080/v1'
>>> parse_url("https://user:secret@example.org/v1")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: An endpoint URL may not carry a user name or password (...): put the key in an ...
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from explorer.core import settings, userfiles
from explorer.core.errors import ExplorerError, shorten
from explorer.core.limits import ENDPOINT_MODEL_CHARS, ENDPOINT_NAME_CHARS, ENDPOINT_URL_CHARS
from explorer.runtime import fence

__all__ = ["DEFAULT_CONCURRENT", "DEFAULT_TIMEOUT", "MAX_ENDPOINTS", "MAX_FILE_BYTES", "Endpoint", "configured", "find",
           "parse_url", "shown_url", "typed"]

DEFAULT_TIMEOUT = settings.ENDPOINT_TIMEOUT.value({})  # the declared default (60 s), for the TOML file's endpoints too
DEFAULT_CONCURRENT = 4  # requests in flight to one endpoint from this server (engines batch them)
MAX_ENDPOINTS = 32  # configured at most: each is probed, and every live page offers them
MAX_FILE_BYTES = 256 * 2**10  # of the endpoints file: 32 tables are a few KB
NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{ENDPOINT_NAME_CHARS - 1}}}")
MODEL = re.compile(rf"[^\s\x00-\x1f<>\"'`]{{1,{ENDPOINT_MODEL_CHARS}}}")


@dataclass(frozen=True)
class Endpoint:
    """One served model: where it is, what it is called there, how to show it."""

    name: str  # the key after "served:" (letters, digits, . _ -)
    base_url: str  # the OpenAI base URL, ending in /v1
    model: str = ""  # the model name the server serves ("" = the only one it lists)
    api_key_env: str = ""  # the environment variable holding the key ("" = none)
    label: str = ""  # how pages name it
    timeout: float = DEFAULT_TIMEOUT
    max_concurrent: int = DEFAULT_CONCURRENT
    source: str = "environment"  # "environment", the TOML file's name, or "typed"

    @property
    def key(self) -> str:
        return f"served:{self.name}"

    @property
    def shown(self) -> str:
        """The name pages show: the label, else the name."""
        return self.label or self.name

    @property
    def host(self) -> str:
        """host:port, for captions (never the path or a query)."""
        return urlsplit(self.base_url).netloc

    def api_key(self) -> str | None:
        """The key from its variable, at request time (None: no key configured or the variable is empty)."""
        return (os.environ.get(self.api_key_env) or "").strip() or None if self.api_key_env else None

    def to_dict(self) -> dict[str, object]:
        """Everything but secrets (a key's variable name is not a secret)."""
        return asdict(self)


_USERINFO = re.compile(r"(?<=//)[^/?#@]*@")
_KEYLIKE = re.compile(r"(?:sk|pk|rk|hf|gsk|xai|key|token)[-_][A-Za-z0-9_-]{8,}|(?=[A-Za-z_-]*\d)(?=[\d_-]*[A-Za-z])"
                      r"[A-Za-z0-9_-]{32,}", re.IGNORECASE)


def shown_url(text: str) -> str:
    """A URL as a message may quote it: without a user name or password, a query, a fragment, or a path part that
    looks like a key (each replaced by …), cut to a readable length.

    >>> shown_url("http://u:sk-123@host:8000/v1?api_key=sk-456#frag")
    "'http://…@host:8000/v1?…'"
    >>> shown_url("https://example.org/keys/sk-live-abcdefghijkl/v1")
    "'https://example.org/keys/…/v1'"
    """
    found = re.search(r"[?#;]", text)
    head, cut = (text[:found.start()], text[found.start()]) if found else (text, "")
    head = _USERINFO.sub("…@", head)
    parts = head.split("/")
    head = "/".join("…" if i >= 3 and (_KEYLIKE.fullmatch(p) or "=" in p) else p for i, p in enumerate(parts))
    return repr(shorten(head + (f"{cut}…" if cut else "")))


def _key_in_path(path: str) -> bool:
    return any(_KEYLIKE.fullmatch(p) or "=" in p for p in path.split("/"))


def parse_url(raw: object) -> str:
    """A typed or configured base URL, checked and normalised (``/v1`` added to a bare host), or an
    ExplorerError saying what is wrong with it. A URL that would carry a secret (a user name or password, a query
    such as ``?api_key=``, a fragment, a key-like path part) is refused, and no message quotes the secret."""
    if not isinstance(raw, str) or not raw.strip():
        raise ExplorerError("No endpoint URL given: type the server's OpenAI base URL, e.g. http://127.0.0.1:8000/v1.")
    text = raw.strip()
    if len(text) > ENDPOINT_URL_CHARS or any(c.isspace() or ord(c) < 32 for c in text):
        raise ExplorerError(f"{shown_url(text)} is not a URL (spaces, control characters or over "
                            f"{ENDPOINT_URL_CHARS} characters): type the server's base URL, e.g. "
                            "http://127.0.0.1:8000/v1.")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as err:  # a port out of range, a malformed IPv6 host
        raise ExplorerError(f"{shown_url(text)} has no valid host and port: ports are 1 to 65535.") from err
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ExplorerError(f"{shown_url(text)} is not an http(s) URL with a host: type the server's base URL, "
                            "e.g. http://127.0.0.1:8000/v1.")
    if parts.username or parts.password or "@" in parts.netloc:
        raise ExplorerError("An endpoint URL may not carry a user name or password (they would show in pages and "
                            "logs): put the key in an environment variable and name it as api_key_env.")
    if parts.query or parts.fragment or ";" in parts.path or _key_in_path(parts.path):
        raise ExplorerError(f"{shown_url(text)} holds more than a base URL (a query such as ?api_key=, a fragment, "
                            "or a path part that looks like a key): give the base URL alone, e.g. "
                            "http://127.0.0.1:8000/v1, and put a key in an environment variable named as api_key_env.")
    path = parts.path.rstrip("/") or "/v1"
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    return urlunsplit((parts.scheme, f"{host}:{port}" if port is not None else host, path, "", ""))


def _name(raw: object, where: str) -> str:
    name = str(raw or "").strip()
    if not NAME.fullmatch(name):
        raise ExplorerError(f"Endpoint name {shorten(name)!r} in {where} must be 1-{ENDPOINT_NAME_CHARS} letters, "
                            "digits, '.', '_' or '-' (it becomes the model key served:NAME).")
    return name


def _model(raw: object, where: str) -> str:
    model = str(raw or "").strip()
    if model and not MODEL.fullmatch(model):
        raise ExplorerError(f"Model name {shorten(model)!r} in {where} has spaces, quotes or control characters: "
                            "use the name the server lists at /v1/models.")
    return model


def _number(raw: object, default: float, lo: float, hi: float, what: str, where: str) -> float:
    if raw is None or raw == "":
        return default
    try:
        value = float(str(raw))
    except ValueError:
        value = float("nan")
    if not lo <= value <= hi:
        raise ExplorerError(f"{what} in {where} must be a number from {lo:g} to {hi:g} (got {shorten(raw)!r}).")
    return value


def _endpoint(raw: Mapping[str, object], where: str, source: str) -> Endpoint:
    key_env = str(raw.get("api_key_env") or "").strip()
    if key_env and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", key_env):
        raise ExplorerError(f"api_key_env in {where} must be the name of an environment variable (letters, digits, "
                            "_), not the key itself.")
    try:
        url = parse_url(raw.get("base_url"))
    except ExplorerError as err:
        raise ExplorerError(f"base_url in {where}: {err}") from err
    return Endpoint(_name(raw.get("name"), where), url, _model(raw.get("model"), where),
                    key_env, str(raw.get("label") or "").strip()[:80],
                    _number(raw.get("timeout"), DEFAULT_TIMEOUT, 1, 3600, "timeout", where),
                    int(_number(raw.get("max_concurrent"), DEFAULT_CONCURRENT, 1, 256, "max_concurrent", where)),
                    source)


def _read_file(path: Path) -> str:
    """The file's text, read with the checks of every user file (a regular file, at most
    :data:`MAX_FILE_BYTES`: a FIFO or ``/dev/zero`` is refused by its kind before any read)."""
    what = "EXPLORER_ENDPOINTS_FILE"
    try:
        return userfiles.decode_text(userfiles.read_path(path, MAX_FILE_BYTES, what), what)
    except ExplorerError as err:  # a shared server shows the operator's path as the fence does
        raise ExplorerError(str(err).replace(f"`{shorten(path)}`", f"`{fence.public(path)}`")) from None


def _tables(path: Path) -> list[dict[str, object]]:
    """The file's ``[[endpoint]]`` tables, at most :data:`MAX_ENDPOINTS`."""
    shown = fence.public(path)
    try:
        data = tomllib.loads(_read_file(path))
    except (tomllib.TOMLDecodeError, RecursionError) as err:
        why = shorten(err) if isinstance(err, tomllib.TOMLDecodeError) else "nested too deep to read"
        raise ExplorerError(f"EXPLORER_ENDPOINTS_FILE {shown} is not valid TOML ({why}): see README, 'When your "
                            "model outgrows this machine'.") from None
    tables = data.get("endpoint", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ExplorerError(f"EXPLORER_ENDPOINTS_FILE {shown} must hold [[endpoint]] tables.")
    if len(tables) > MAX_ENDPOINTS:
        raise ExplorerError(f"EXPLORER_ENDPOINTS_FILE {shown} lists {len(tables):,} endpoints; at most "
                            f"{MAX_ENDPOINTS} are read (each is probed, and every page offers them): keep the ones "
                            "visitors should compare.")
    return tables


_PARSED: dict[tuple[str, int, int, int, int], tuple[Endpoint, ...]] = {}


def _from_file(path: Path) -> tuple[Endpoint, ...]:
    """The file's endpoints, parsed once per version of the file (every page run asks)."""
    try:
        st = os.stat(path)
        stamp = (str(path), st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
    except (OSError, ValueError):
        stamp = None  # _read_file says why
    if stamp is not None and stamp in _PARSED:
        return _PARSED[stamp]
    found = tuple(_endpoint(t, f"{path.name} (endpoint {i + 1})", path.name) for i, t in enumerate(_tables(path)))
    if stamp is not None:
        _PARSED.clear()  # one file is configured at a time: keep its latest version only
        _PARSED[stamp] = found
    return found


def configured(env: Mapping[str, str] | None = None) -> tuple[Endpoint, ...]:
    """The operator's endpoints: the environment's one, then the file's, in order; a name used twice is refused."""
    out: list[Endpoint] = []
    if url := settings.ENDPOINT_URL.read(env):
        out.append(_endpoint({"name": settings.ENDPOINT_NAME.read(env), "base_url": url,
                              "model": settings.ENDPOINT_MODEL.read(env),
                              "api_key_env": settings.ENDPOINT_KEY_ENV.read(env),
                              "label": settings.ENDPOINT_LABEL.read(env),
                              "timeout": settings.ENDPOINT_TIMEOUT.read(env)}, "EXPLORER_ENDPOINT_*", "environment"))
    if file := settings.ENDPOINTS_FILE.read(env):
        out += _from_file(Path(file).expanduser())
    if len(out) > MAX_ENDPOINTS:
        raise ExplorerError(f"{len(out)} endpoints are configured; at most {MAX_ENDPOINTS}: drop some from "
                            "EXPLORER_ENDPOINTS_FILE.")
    seen: set[str] = set()
    for ep in out:
        if ep.name in seen:
            raise ExplorerError(f"Two endpoints are named {ep.name!r}: give each its own name.")
        seen.add(ep.name)
    return tuple(out)


def find(name: str, extra: tuple[Endpoint, ...] = (), env: Mapping[str, str] | None = None) -> Endpoint:
    """The endpoint called ``name`` (the operator's, else one of ``extra``: those typed in this session)."""
    for ep in (*configured(env), *extra):
        if ep.name == name:
            return ep
    known = ", ".join(ep.name for ep in (*configured(env), *extra)) or "none configured"
    raise ExplorerError(f"No served endpoint is called {shorten(name)!r} ({known}). Set EXPLORER_ENDPOINT_URL or "
                        "EXPLORER_ENDPOINTS_FILE (README: 'When your model outgrows this machine'), or add one by URL "
                        "on the Models page.")


def typed(name: str, url: str, model: str = "", env: Mapping[str, str] | None = None) -> Endpoint:
    """An endpoint a user typed. On a shared server (the path fence on) only the operator's URLs are admitted."""
    where = "the typed endpoint"
    base = parse_url(url)
    ep = Endpoint(_name(name, where), base, _model(model, where), source="typed")
    if fence.restricted():
        listed = {(e.base_url, e.model or model) for e in configured(env)}
        if (base, ep.model) not in listed and base not in {b for b, _ in listed}:
            raise ExplorerError("This server is shared, so it only calls the endpoints its operator configured "
                                "(EXPLORER_ENDPOINT_URL / EXPLORER_ENDPOINTS_FILE): pick one of those, or run the "
                                "explorer on your own machine to use another URL.")
        operator = next(e for e in configured(env) if e.base_url == base)
        return replace(operator, name=ep.name, model=ep.model or operator.model, source="typed")
    return ep
