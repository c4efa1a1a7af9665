"""Shared UI helpers: session defaults, error display, figure export, URL-bound pickers.

Pages stay thin: they read widgets, call a cached wrapper and hand the result to these.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import cast, overload

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.errors import StreamlitPageNotFoundError

from explorer.core.errors import ExplorerError
from explorer.core.labels import UNTRAINED_NOTE, escape_markdown
from explorer.core.notices import Notice
from explorer.core.units import human, human_bytes  # noqa: F401  (re-exported for pages)
from explorer.runtime import workers
from explorer.runtime.cancel import RequestStopped

_LOG = logging.getLogger("transformer_explorer")
PAGES = Path(__file__).resolve().parent.parent / "pages"

SESSION_DEFAULTS: dict[str, object] = {
    "export_format": "png",  # what the camera button of every figure saves
}


def init_session_state() -> None:
    """Set every session default once (called from the entry, before any page runs)."""
    for key, value in SESSION_DEFAULTS.items():
        st.session_state.setdefault(key, value)
    with st.sidebar:
        st.radio(
            "Figure export format", ["png", "svg"], key="export_format", horizontal=True,
            help="The camera icon on every figure saves it in this format.",
        )


def guard() -> contextlib.AbstractContextManager[None, bool]:
    """Show an ``ExplorerError`` as a red box instead of a traceback; the page goes on. A request
    that queued for a model worker says how long it waited (explorer.runtime.workers).

    Typed as a manager that may swallow the exception (``__exit__`` returns a bool), as it does: code after
    a ``with ui.guard():`` block runs even when the block raised."""
    return cast("contextlib.AbstractContextManager[None, bool]", _guarded())


@contextlib.contextmanager
def _guarded() -> Iterator[None]:
    try:
        yield
    except RequestStopped as err:  # its budget ran out: say so, not as a failure of the input
        st.warning(markdown_safe(str(err)), icon=":material/timer_off:")
    except ExplorerError as err:
        st.error(markdown_safe(str(err)), icon=":material/error:")
    if waited := workers.take_wait_notice():
        st.caption(waited)


@contextlib.contextmanager
def last_resort() -> Iterator[None]:
    """Around the whole page run: a bug shows a short message with a reference, never a traceback.

    The details (traceback, server paths) go to the server log only. Streamlit's own control flow
    (``st.rerun``, ``st.stop``, page switches) derives from BaseException and passes through untouched.
    """
    try:
        yield
    except Exception:
        ref = uuid.uuid4().hex[:8]
        _LOG.exception("unhandled error on a page (reference %s)", ref)
        st.error(f"Something went wrong on this page (reference `{ref}`). The details are in the server's log; "
                 "try other settings, or reload the page.", icon=":material/bug_report:")


# One mapping for every page: a notice's kind -> (box, icon). A warning where the result is not what was
# asked for (input cut or dropped, random weights, a stand-in, a run stopped early); an info box where it is,
# only reached another way (a fallback device, offloaded layers) or explained.
NOTICE_STYLE: dict[str, tuple[str, str]] = {
    "truncated": ("warning", ":material/content_cut:"),
    "dropped": ("warning", ":material/playlist_remove:"),
    "untrained": ("warning", ":material/casino:"),
    "stand-in": ("warning", ":material/science:"),
    "missing": ("warning", ":material/help:"),
    "stopped": ("warning", ":material/timer_off:"),
    "fallback": ("info", ":material/swap_horiz:"),
    "offload": ("info", ":material/hard_drive:"),
    "info": ("info", ":material/info:"),
}
UNTRAINED = Notice("untrained", UNTRAINED_NOTE)  # the label of every result computed with random weights


def _box(name: str) -> Callable[..., object]:
    return {"warning": st.warning, "info": st.info}[name]


def notice(note: Notice) -> None:
    """Show one library notice: its kind picks the box and icon; its text is shown literally (notices quote
    what users typed, which must never become markdown or HTML)."""
    box, icon = NOTICE_STYLE[note.kind]
    _box(box)(escape_markdown(note.text), icon=icon)


def notices(items: Iterable[Notice], kinds: Collection[str] | None = None) -> None:
    """Every notice of ``items`` in order (only those of ``kinds`` when given), each through :func:`notice`."""
    for note in items:
        if kinds is None or note.kind in kinds:
            notice(note)


def page_link(file: str, label: str, icon: str | None = None, **query: str) -> None:
    """A link to another page of the navigation (``file`` in pages/, ``query`` its URL parameters). A page
    run on its own (AppTest, no navigation to link into) shows the label as a caption instead."""
    try:
        st.page_link(str(PAGES / file), label=label, icon=icon, query_params=query or None)
    except StreamlitPageNotFoundError:
        st.caption(label)


def markdown_safe(text: str) -> str:
    """Escape markdown/LaTeX outside `code spans`: messages quote user-typed paths and text."""
    return escape_markdown(text, keep_code=True)


def progress_to(bar: DeltaGenerator) -> Callable[[float, str], None]:
    """The library's progress callback ``(fraction, text)`` drawn on ``bar`` (an ``st.progress``), the fraction
    kept within 0..1 as ``st.progress`` requires."""

    def report(fraction: float, text: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=text)

    return report


def figure(fig, name: str, *, height: int | None = None, key: str | None = None) -> None:
    """Draw a plotly figure whose camera button exports ``name``.png/.svg (client side)."""
    config = {
        "displaylogo": False,
        "toImageButtonOptions": {
            "format": st.session_state.get("export_format", "png"),
            "filename": name,
            "scale": 2,
        },
    }
    if height:
        fig.update_layout(height=height)
    st.plotly_chart(fig, config=config, key=key, width="stretch")


def csv_download(df, name: str, label: str = "Download CSV", key: str | None = None) -> None:
    """A download button for a pandas DataFrame as CSV."""
    download(label, df.to_csv(index=False).encode(), f"{name}.csv", "text/csv", key=key)


def download(label: str, data: bytes | Callable[[], bytes], file_name: str, mime: str = "application/octet-stream",
             *, key: str | None = None) -> None:
    """A download that does not rerun the page (``on_click="ignore"``): what it saves is what the page shows
    already, and Streamlit's default rerun started the whole script again beside the download (the attention page's
    model view: every layer's figure sent to the browser once more) and raced it. ``data`` may be a callable, run
    only when clicked (a deferred download)."""
    st.download_button(label, data, file_name, mime, key=key, on_click="ignore")


def query_list(param: str, default: Sequence[str], allowed: Sequence[str], *, limit: int | None = None) -> list[str]:
    """A comma-separated selection from the URL: allowed values only, duplicates dropped, at most ``limit``.

    A shared link with more values than the widget takes is clipped (with a notice), never an error.
    """
    raw = st.query_params.get(param)
    if not raw:
        return list(default)
    picked = list(dict.fromkeys(v for v in raw.split(",") if v in allowed))
    if limit is not None and len(picked) > limit:
        st.info(f"The link selects {len(picked)} values for `{param}`; showing the first {limit}.",
                icon=":material/content_cut:")
        picked = picked[:limit]
    return picked or list(default)


def set_query_list(param: str, values: Sequence[str]) -> None:
    """Write a selection into the URL so the view can be shared as a link."""
    st.query_params[param] = ",".join(values)


def query_int(param: str, default: int, lo: int, hi: int) -> int:
    """An integer from the URL (shared views), clipped to the widget's range; garbage gives ``default``."""
    raw = str(st.query_params.get(param, default))[:32]
    try:
        return min(max(int(raw), lo), hi)
    except ValueError:
        return default


@overload
def query_choice(param: str, allowed: Sequence[str], default: str) -> str: ...


@overload
def query_choice(param: str, allowed: Sequence[str], default: None = None) -> str | None: ...


def query_choice(param: str, allowed: Sequence[str], default: str | None = None) -> str | None:
    """One value from the URL if it is allowed, else ``default``."""
    value = st.query_params.get(param)
    return value if value in allowed else default


def seed_from_url(state_key: str, param: str, allowed: Sequence[str]) -> None:
    """Seed a keyed widget from the URL on the first run of a session (shared links)."""
    value = query_choice(param, allowed)
    if state_key not in st.session_state and value is not None:
        st.session_state[state_key] = value


def _variant_label(key: str) -> str:
    from explorer.architecture import catalog

    v = catalog.get_variant(key)
    return f"{v.name} ({v.family}, {v.year})"


def pick_variant(label: str, param: str = "model", default: str = "bert-base", key: str | None = None) -> str:
    """A variant selectbox whose choice lives in the URL (``?model=KEY``)."""
    from explorer.architecture import catalog

    options = catalog.keys()
    current = query_list(param, [default], options)[0]
    choice = st.selectbox(label, options, index=options.index(current), format_func=_variant_label,
                          key=key or f"pick_{param}")
    st.query_params[param] = choice
    return choice


def pick_variants(label: str, param: str = "models", default: Sequence[str] = (), key: str | None = None,
                  max_selections: int | None = None) -> list[str]:
    """A multiselect of variants whose choice lives in the URL (``?models=a,b,c``)."""
    from explorer.architecture import catalog

    options = catalog.keys()
    current = query_list(param, [d for d in default if d in options], options, limit=max_selections)
    choice = st.multiselect(label, options, default=current, format_func=_variant_label,
                            key=key or f"pick_{param}", max_selections=max_selections)
    set_query_list(param, choice)
    return choice


def variant_card(key: str) -> None:
    """Name, paper, checkpoint, objectives, attention, key idea and headline figures."""
    from explorer.architecture import catalog

    v = catalog.get_variant(key)
    st.markdown(f"**{v.name}** · {v.family} · {v.year} · [{v.paper_title}]({v.paper})")
    st.caption(
        f"Checkpoint: `{v.reference_checkpoint or 'configuration only'}` · model_type `{v.model_type}` · "
        f"objectives: {', '.join(v.objectives)} · attention: {v.attention} · positions: {v.positions}"
    )
    st.write(v.idea)
    for line in v.headline:
        st.markdown(f"- {line}")
    st.caption(f"Configuration source: {v.config_source}")
