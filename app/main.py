"""Streamlit entry: page config, session defaults and navigation, nothing else.

``streamlit run app/main.py`` puts only ``app/`` on ``sys.path``; the repository root is
added here so that pages can ``import explorer`` and ``from app import ui``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app import preload, ui  # noqa: E402
from app.navigation import SECTIONS  # noqa: E402
from app.state import liveness  # noqa: E402
from explorer.core import logs, settings  # noqa: E402
from explorer.core.errors import ExplorerError  # noqa: E402

PAGES = ROOT / "pages"
# Each page's file by the url path Streamlit gives its page (the default page's is "").
PAGE_FILES = {("" if u == "home" else u): PAGES / f for pages in SECTIONS.values() for f, _, _, u in pages}


def _navigation() -> st.Page:
    """The sidebar's pages. The default page is served at "/" and Streamlit ignores its url_path, yet reserves it:
    the declared "/home" (typed, or a shared link) answered "Page not found". So the Overview reserves "overview"
    and a hidden page at "/home" sends the visitor to it."""
    nav: dict[str, list[st.Page]] = {}
    home: st.Page | None = None
    for section, pages in SECTIONS.items():
        nav[section] = []
        for f, t, i, u in pages:
            page = st.Page(str(PAGES / f), title=t, icon=i, url_path="overview" if u == "home" else u,
                           default=(u == "home"))
            home = page if u == "home" else home
            nav[section].append(page)
    if home is not None:
        nav[next(iter(nav))].append(st.Page(lambda: st.switch_page(home), title="Home", url_path="home",
                                            visibility="hidden"))
    return st.navigation(nav)


def _fence_paths_unless_local() -> None:
    """Typed paths are fenced (explorer.runtime.fence) unless the server listens on loopback only, or the
    operator chose with EXPLORER_RESTRICT_PATHS. Streamlit's default address is every interface."""
    address = str(st.get_option("server.address") or "")
    local = address in ("localhost", "127.0.0.1", "::1") or address.startswith("127.")
    settings.set_default("EXPLORER_RESTRICT_PATHS", "0" if local else "1")


def _stop_on_bad_settings() -> None:
    """A bad ``EXPLORER_*`` value stops every page with one red box naming it and what it accepts, before a
    request fails halfway on it (explorer.core.settings)."""
    try:
        settings.check_all()
    except ExplorerError as err:
        st.error(ui.markdown_safe(str(err)), icon=":material/error:")
        st.stop()


_fence_paths_unless_local()
logs.quiet_imports()  # optional packages' import-time warnings (torchao's) stay out of the server log
liveness.install()  # a request whose tab closed or reran stops at its next step (explorer.runtime.cancel)
st.set_page_config(page_title="Transformer Explorer", page_icon=":material/hub:", layout="wide")
_stop_on_bad_settings()
ui.init_session_state()
with ui.last_resort():  # a bug shows a short message with a reference; the traceback goes to the server log
    page = _navigation()
    if (script := PAGE_FILES.get(page.url_path)) is not None:
        preload.ensure(script)  # two first visitors at once must not import the same modules in two threads
    page.run()
