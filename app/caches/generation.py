"""Cached wrappers of the decoding lab (the page calls these, never the library directly).

- ``prepared``: the one-time conversion of the bundled GGUF (``st.cache_resource``: once per
  process; the page's progress callback is not part of the key). Models themselves are not
  held here: ``explorer.runtime.loading`` keeps one memory-bounded LRU cache for every session.
- ``next_token``: ``st.cache_data`` (hashable arguments, bounded).
- ``generation``: live step-by-step decoders kept per browser session (``st.session_state``),
  so the Step button continues from the decoder's KV cache instead of starting over.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Any

import streamlit as st

from explorer.core.notices import Notice
from explorer.runtime import workers
from explorer.runtime.cancel import RequestStopped
from explorer.tasks import generation as gen

MAX_DECODERS = 8  # live decoders kept per session (each holds a KV cache)


@st.cache_resource(show_spinner=False, max_entries=4)
def prepared(model: str, _progress: Any = None, device: str = "auto", dtype: str = "auto") -> str:
    """The model ready to load (the bundled GGUF converted first, reporting to ``_progress``)."""
    gen.load_decoder(model, progress=_progress, device=device, dtype=dtype)
    return model


@st.cache_data(max_entries=32, show_spinner="Running the prompt through the model…")
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def next_token(model: str, prompt: str, top_k: int, device: str = "auto", dtype: str = "auto") -> gen.NextToken:
    return gen.next_token(gen.load_decoder(model, device=device, dtype=dtype), prompt, top_k)


def _decoders() -> OrderedDict:
    return st.session_state.setdefault("_decoding_lab_decoders", OrderedDict())


@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def generation(model: str, prompt: str, settings: gen.DecodingSettings, steps: int, device: str = "auto",
               dtype: str = "auto") -> gen.Generation:
    """The first ``steps`` tokens of this strategy, continuing this session's decoder when it can (a decoder
    is kept per device and dtype: its KV cache lives there)."""
    live, key = _decoders(), (model, prompt, settings, device, dtype)
    loaded = gen.load_decoder(model, device=device, dtype=dtype)
    if key not in live or len(live[key][1].steps) > steps:  # new settings, or asked for fewer tokens
        live[key] = gen.start(loaded, prompt, settings)
    live.move_to_end(key)
    while len(live) > MAX_DECODERS:
        live.popitem(last=False)
    prompt_ids, decoder = live[key]
    try:
        decoder.run(until=steps)
    except RequestStopped as err:  # out of budget: the tokens so far, and why there are not more
        if err.reason == "gone":  # nobody will see it; the decoder keeps its tokens for the next run
            raise
        done = gen.result(loaded, prompt_ids, decoder)
        return replace(done, notices=(*done.notices, Notice("stopped", str(err))))
    return gen.result(loaded, prompt_ids, decoder)
