"""The shapes of an engine's answers, checked before any field is read.

An engine that answers HTTP 200 with OpenAI-shaped JSON may still send a number where a list belongs, a
``text_offset`` of 1e308, a log-probability of +1e308 or embeddings of unequal widths. Every answer is therefore
validated against a typed model of the fields this explorer reads (pydantic, strict: no string is taken for a
number, no float for an integer) before anything else touches it, and a mismatch is one
:class:`~explorer.serving.errors.ServedError` naming the field (``choices[0].logprobs.top_logprobs``), never a
TypeError deep inside. Fields nobody reads are ignored, so engines' additions pass.

>>> from explorer.serving.endpoints import Endpoint
>>> ep = Endpoint("x", "http://127.0.0.1:8000/v1")
>>> read(ep, Completions, {"choices": [{"text": "hi", "logprobs": None}]}, "/v1/completions").choices[0].text
'hi'
>>> read(ep, Completions, {"choices": [{"text": 5}]}, "/v1/completions")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.serving.errors.ServedError: x answered /v1/completions with choices[0].text of the wrong shape (Input ...
"""

from __future__ import annotations

import math
from typing import Annotated, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, RootModel, ValidationError, model_validator

from explorer.serving.endpoints import Endpoint
from explorer.serving.errors import ServedError

__all__ = ["Completions", "ContentLogprobs", "Detokenized", "Embeddings", "LegacyLogprobs", "ModelList", "OpenAPI",
           "Pieces", "Shape", "TokenIds", "Version", "logprobs", "read"]

MAX_OFFSET = 2**31 - 1  # a character offset or token id: no text this explorer sends comes near it
LOGPROB_SLACK = 1e-3  # engines round: a log-probability may come out a hair above 0
S = TypeVar("S", bound=BaseModel)


def _nan_is_none(value: object) -> object:
    """NaN is 'not given', like null (-inf stays: a token the engine rules out)."""
    return None if isinstance(value, float) and math.isnan(value) else value


Offset = Annotated[int, Field(ge=0, le=MAX_OFFSET)]
LogProb = Annotated[Annotated[float, Field(le=LOGPROB_SLACK)] | None, BeforeValidator(_nan_is_none)]
Number = Annotated[float, Field(allow_inf_nan=False)]


class Shape(BaseModel):
    """Strict, frozen, extra fields ignored."""

    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")


class Listed(Shape):
    id: str
    owned_by: str | None = None


class ModelList(Shape):
    """``GET /v1/models``."""

    data: list[Listed]


class LegacyLogprobs(Shape):
    """vLLM's and llama-cpp-python's ``logprobs``: four lists, one entry per token."""

    tokens: list[str] | None = None
    token_logprobs: list[LogProb] | None = None
    top_logprobs: list[dict[str, LogProb] | None] | None = None
    text_offset: list[Offset] | None = None

    @model_validator(mode="after")
    def _one_entry_per_token(self) -> LegacyLogprobs:
        n = len(self.tokens or ())
        for name in ("token_logprobs", "top_logprobs", "text_offset"):
            given = getattr(self, name)
            if given and len(given) != n:
                raise ValueError(f"{name} has {len(given)} entries for {n} tokens")
        return self


class ContentTop(Shape):
    token: str
    logprob: LogProb = None


class ContentItem(Shape):
    token: str
    logprob: LogProb = None
    top_logprobs: list[ContentTop] | None = None


class ContentLogprobs(Shape):
    """llama.cpp's ``logprobs.content[]``."""

    content: list[ContentItem]


class Choice(Shape):
    text: str
    finish_reason: str | None = None
    logprobs: dict[str, object] | None = None  # read as one of the two shapes above (:func:`logprobs`)


class Usage(Shape):
    prompt_tokens: Annotated[int, Field(ge=0, le=MAX_OFFSET)] | None = None


class Completions(Shape):
    """``POST /v1/completions``."""

    choices: list[Choice] = Field(min_length=1)
    usage: Usage | None = None


class Row(Shape):
    index: Annotated[int, Field(ge=0, le=MAX_OFFSET)] | None = None
    embedding: list[Number] | list[list[Number]] = Field(union_mode="left_to_right")


class Embeddings(Shape):
    """``POST /v1/embeddings``."""

    data: list[Row]


class Version(Shape):
    version: str = ""


class Info(Shape):
    title: str = ""
    version: str = ""


class OpenAPI(Shape):
    info: Info = Info()


class TokenId(Shape):
    id: Offset


class TokenIds(Shape):
    """``{"tokens": [...]}`` of the tokenize routes: ids, or llama.cpp's ``{"id": ...}`` objects."""

    tokens: list[Offset] | list[TokenId] = Field(union_mode="left_to_right")
    max_model_len: object = None  # vLLM's context, read only when it is a positive int

    def ids(self) -> list[int]:
        return [t.id if isinstance(t, TokenId) else t for t in self.tokens]

    def context(self) -> int:
        """The model's context when the route says (vLLM), else 0."""
        value = self.max_model_len
        return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_OFFSET else 0


class Piece(Shape):
    id: Offset
    text: str


class Pieces(RootModel[list[Piece]]):
    """TGI's ``/tokenize``: each token's id and text."""

    model_config = ConfigDict(strict=True, frozen=True)


class Detokenized(Shape):
    """The detokenize routes: the text under ``text`` (llama-cpp-python), ``prompt`` (vLLM) or ``content``
    (llama.cpp)."""

    text: str | None = None
    prompt: str | None = None
    content: str | None = None


def _where(loc: tuple[int | str, ...]) -> str:
    """``("choices", 0, "logprobs")`` -> ``choices[0].logprobs`` (a union's member names left out).

    >>> _where(("data", 1, "embedding", "list[float]", 3))
    'data[1].embedding[3]'
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif "[" not in part and not part.startswith(("function-", "nullable")) and part not in ("float", "int"):
            out += f".{part}" if out else part
    return out or "the answer"


def read(ep: Endpoint, shape: type[S], data: object, what: str, at: str = "") -> S:
    """``data`` as ``shape``, or one ServedError naming the first field that is not what it should be (``at``: the
    path of ``data`` inside the whole answer)."""
    try:
        return shape.model_validate(data)
    except ValidationError as err:
        first = err.errors(include_url=False, include_input=False)[0]
        where = ".".join(p for p in (at, _where(tuple(first["loc"]))) if p and p != "the answer") or "the answer"
        said = str(first["msg"]).removeprefix("Value error, ")
        raise ServedError(f"{ep.shown} answered {what} with {where} of the wrong shape ({said}): it may not be "
                          "OpenAI-compatible for this request, or its version answers differently; its own log "
                          "may say why.", "garbage") from None


def logprobs(ep: Endpoint, raw: dict[str, object] | None, what: str) -> LegacyLogprobs | ContentLogprobs | None:
    """A choice's ``logprobs`` in whichever shape it came: ``content[]`` (llama.cpp) or the legacy lists."""
    if raw is None:
        return None
    shape: type[LegacyLogprobs | ContentLogprobs] = ContentLogprobs if "content" in raw else LegacyLogprobs
    return read(ep, shape, raw, what, "choices[0].logprobs")
