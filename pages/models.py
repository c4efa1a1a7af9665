"""Models & weights: where every variant's weights are, downloads on request, what is in memory."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import ui
from app.caches import models as cache
from app.caches import serving as cache_serving
from app.views import device_picker
from explorer.core import limits
from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice
from explorer.runtime import download, fence, modelcache, placement, weights, workers
from explorer.runtime.resolve import resolve
from explorer.serving import endpoints
from explorer.serving import probe as serving_probe

chosen = device_picker.pick()  # the sidebar's device and precision, shared by every live page
st.title("Models & weights")
st.caption("Weights are looked up, in order, in your models directory, the Hugging Face cache, and the "
           "weights bundled with the app (all-MiniLM-L6-v2). Nothing is downloaded unless you press Download. "
           "Layouts accepted in the models directory: DIR/KEY, DIR/owner--name, DIR/owner/name, DIR/name.")

# "models_dir" is a plain session key (widget keys are dropped when the user changes page), so the
# directory typed here is still used by the demo pages.
st.session_state.setdefault("models_dir", fence.models_dir_env() or "")
st.text_input("Models directory", value=st.session_state["models_dir"], key="models_dir_input",
              placeholder="/path/to/models (or set EXPLORER_MODELS_DIR)", help="Used by every demo page.",
              on_change=lambda: st.session_state.update(models_dir=st.session_state["models_dir_input"]))
directory = cache.models_dir()
with ui.guard():
    device, dtype = chosen.resolve()
    st.caption(f"Models run on **{placement.caption(placement.device_name(device), placement.dtype_name(dtype))}** "
               f"(sidebar: {chosen.label}; auto is CUDA, then Apple MPS, then the CPU; half precision on a GPU). "
               "`python -m explorer doctor` checks the set-up.")

rows = []
with ui.guard():
    rows = weights.status_table(directory)  # not cached: the file system is the truth (downloads show at once)
    if problem := fence.models_dir_problem(directory):  # a typo would otherwise just read "not present"
        ui.notice(Notice("missing", problem))
table = pd.DataFrame(rows)
if rows:
    ready = sum(r["status"] == "ready" for r in rows)
    st.metric("Variants with weights on disk", f"{ready} / {len(rows)}")
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "status": st.column_config.TextColumn(help="ready / not present / downloading / error")})
    ui.csv_download(table, "model_weights", key="models_csv")
    st.caption("Not present? Press Download below, run `python -m explorer download KEY`, or copy a "
               "save_pretrained directory into your models directory.")

st.subheader("Download from the Hugging Face hub", divider="gray")
missing = [str(r["key"]) for r in rows if r["status"] != "ready"]
key = st.selectbox("Variant", missing, index=None, key="dl_key", placeholder="Pick a variant without weights")
target = f"{directory}/{key}" if directory and key else "the Hugging Face cache"
clicked = st.button("Download", key="dl_button", disabled=key is None, help=f"Saves into {target}; safetensors only.")
if clicked and key is not None:  # the button is disabled until a variant is picked
    bar = st.progress(0.0, text=f"Contacting the hub for {key}…")
    with ui.guard():
        status = download.download(key, directory, ui.progress_to(bar))
        st.success(status.message, icon=":material/check_circle:")

st.subheader("Check a directory", divider="gray")
path = st.text_input("Directory saved with save_pretrained", key="check_path")
if path.strip():
    with ui.guard():
        ref = resolve(path, directory)
        if ref.status is None:  # neither a key, a hub id nor a directory: the guard shows why
            raise ExplorerError(ref.reason)
        found = ref.status
        show = st.success if found.status == "ready" else st.error
        show(ui.markdown_safe(f"{found.status}: {found.message}"))  # a typed path may hold markdown
        if found.status == "ready":
            st.caption(f"Formats: {', '.join(found.formats)} · {found.disk_bytes / 2**20:.1f} MB")

st.subheader("Served models (inference engines)", divider="gray")
st.caption("A model too big for this machine runs on an inference engine (vLLM, SGLang, TGI, llama.cpp, Ollama) "
           "and is used here through its OpenAI-compatible API, beside the local models, as `served:NAME` on "
           "Decoding, Fill-mask, Spans & QA and Similarity. Attention maps and layer trees stay local: no engine "
           "sends them. `python -m explorer serve` starts one on this machine (README: 'When your model outgrows "
           "this machine').")
with ui.guard():
    served = cache_serving.all_endpoints()
    if served:
        probed = cache_serving.capabilities_of(served)  # together: the page waits for the slowest probe only
        table = pd.DataFrame([serving_probe.summary(ep, caps) for ep, caps in zip(served, probed, strict=True)])
        st.dataframe(table, hide_index=True, width="stretch", key="served_table")
    else:
        st.caption("None configured: set EXPLORER_ENDPOINT_URL (with EXPLORER_ENDPOINT_MODEL, EXPLORER_ENDPOINT_NAME) "
                   "or EXPLORER_ENDPOINTS_FILE before starting the app.")
if fence.restricted():
    st.caption("This server is shared: it only calls the endpoints its operator configured.")
else:
    with st.form("add_endpoint", border=False):
        c1, c2, c3 = st.columns([1, 2, 1])
        name = c1.text_input("Name", value="mine", key="served_name", max_chars=limits.ENDPOINT_NAME_CHARS)
        url = c2.text_input("Base URL", key="served_url", placeholder="http://127.0.0.1:8000/v1",
                            max_chars=limits.ENDPOINT_URL_CHARS)
        model_name = c3.text_input("Model (as the server lists it)", key="served_model",
                                   max_chars=limits.ENDPOINT_MODEL_CHARS)
        if st.form_submit_button("Add for this session"):
            with ui.guard():
                ep = endpoints.typed(name, url, model_name)
                cache_serving.add_typed(ep)  # the live pages offer it until this tab is closed
                st.rerun()

st.subheader("In memory (shared by all sessions)", divider="gray")
jobs = workers.stats()
st.caption(f"Model cache bound: {modelcache.budget_bytes() / 2**30:.1f} GB (EXPLORER_MODEL_CACHE_MB; least recently "
           f"used models are evicted) · model jobs at once: {jobs['slots']} (EXPLORER_MODEL_WORKERS), running now: "
           f"{jobs['running']}, median wait {jobs['median_wait_s']:.2f} s over the last {jobs['jobs']} jobs")
loaded = modelcache.cache_info()  # every session's models, least recently used first
if loaded:
    st.dataframe(pd.DataFrame(loaded)[["name", "task", "device_name", "dtype", "untrained", "memory_mb",
                                       "load_seconds", "path", "notice"]], hide_index=True, width="stretch")
else:
    st.caption("No model loaded yet: the demo pages load them on first use.")
if st.button("Free memory", key="free_memory", disabled=not loaded):
    cache.free_memory()
    st.rerun()
