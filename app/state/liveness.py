"""Whether a browser session still wants the answer its request is computing.

``explorer.runtime.workers.queued`` asks :func:`probe` (installed by ``app/main.py``) when a request starts,
in the request's own thread (Streamlit runs each session's script in its thread), and the
request's :class:`explorer.runtime.cancel.CancelToken` calls the returned ``wanted()`` at every step.
A request is no longer wanted when:

- its session is not active any more (tab closed, connection lost): Streamlit 1.67's
  ``Runtime.is_active_session``; a disconnect also requests a STOP of the session's script;
- its script run was asked to stop, or to start a new full run (the user clicked or typed again):
  that run throws away whatever this one would draw, and the new run asks again if it still needs it.
  A fragment-only rerun does not pre-empt the running script, so it does not count.
"""

from __future__ import annotations

from collections.abc import Callable

from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from explorer.runtime import workers


def _superseded(requests: object) -> bool:
    """The run was told to stop, or a full rerun is waiting (read without the lock: one enum read)."""
    state = getattr(requests, "_state", None)
    if state is ScriptRequestType.STOP:
        return True
    data = getattr(requests, "_rerun_data", None)
    return state is ScriptRequestType.RERUN and not getattr(data, "fragment_id_queue", None)


def probe() -> Callable[[], bool] | None:
    """``wanted()`` for the script run of this thread, or None outside a script run (CLI, threads)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return None
    session_id, requests = ctx.session_id, ctx.script_requests
    runtime = Runtime.instance() if Runtime.exists() else None  # AppTest has no runtime

    def wanted() -> bool:
        if runtime is not None and not runtime.is_active_session(session_id):
            return False
        return not _superseded(requests)

    return wanted


def session_probe() -> Callable[[], bool]:
    """``alive()`` for this thread's browser session, for work that outlives its script run (the lab's
    trainings): False once the tab is closed or its connection lost; always True outside a server."""
    ctx = get_script_run_ctx(suppress_warning=True)
    runtime = Runtime.instance() if Runtime.exists() else None
    if ctx is None or runtime is None:
        return lambda: True
    session_id = ctx.session_id
    return lambda: runtime.is_active_session(session_id)


def install() -> None:
    """Let every queued request of this server stop when its session no longer wants it."""
    workers.set_probe(probe)
