"""The sidebar's "Device" and "Precision" pickers, shared by every live page.

The choice lives in ``st.query_params`` (``?device=cpu&dtype=float32``) so that a link shares it, and
in the session (a page switch clears the URL's parameters; the next live page writes them back).
Devices this machine lacks are not offered (the help text says why), nor float16 where it would run on
the CPU. Pages pass the returned :class:`explorer.runtime.placement.Placement`'s ``device`` and ``dtype`` to
their cached wrappers, so the choice is part of every cache key.
"""

from __future__ import annotations

import streamlit as st

from explorer.core.errors import ExplorerError
from explorer.runtime import placement
from explorer.runtime.placement import Placement

__all__ = ["pick", "ran_caption"]

_KEYS = {"device": "placement_device", "dtype": "placement_dtype"}  # widget keys
_SAVED = "placement_saved"  # survives pages without the pickers (widget state does not)


def _dtype_options(device: str) -> tuple[str, ...]:
    """Precisions offered for a device choice: float16 is refused on the CPU (explorer.runtime.placement says why)."""
    runs_on = placement.best_device() if device == "auto" else device
    return tuple(d for d in placement.DTYPES if not (d == "float16" and runs_on == "cpu"))


def _seed(name: str, options: tuple[str, ...]) -> None:
    """The widget's value before it is drawn: the URL's, else this session's, else auto (never one not offered)."""
    key, saved = _KEYS[name], st.session_state.setdefault(_SAVED, {})
    url = st.query_params.get(name)
    try:  # the URL accepts what the CLI accepts (cpu, CUDA, bf16)
        url = getattr(Placement.parse(**{name: url}), name) if url else None
    except ExplorerError:  # a bad shared link falls back to the session's choice, it does not break the page
        url = None
    if url in options and key not in st.session_state:
        st.session_state[key] = url
    if st.session_state.get(key) not in options:
        st.session_state[key] = saved.get(name) if saved.get(name) in options else "auto"


def _unavailable_help() -> str:
    missing = [f"{d}: {placement.unavailable_reason(d)}" for d in placement.DEVICES
               if placement.unavailable_reason(d)]
    return "Where models run. auto: CUDA, then Apple MPS, then the CPU." + (
        " Not offered here: " + "; ".join(missing) + "." if missing else "")


def pick() -> Placement:
    """Draw the two pickers in the sidebar and return the choice (also written to the URL)."""
    devices = placement.available_devices()
    _seed("device", devices)
    with st.sidebar:
        device = st.selectbox("Device", devices, key=_KEYS["device"], help=_unavailable_help())
        dtypes = _dtype_options(device)
        _seed("dtype", dtypes)
        dtype = st.selectbox("Precision", dtypes, key=_KEYS["dtype"],
                             help="auto: bfloat16 on CUDA (float16 on GPUs before Ampere), float16 on MPS, "
                                  "float32 on the CPU. float16 is not offered on the CPU: use bfloat16 there.")
    chosen = Placement(device, dtype)
    st.session_state[_SAVED] = chosen.to_dict()
    for name, value in chosen.to_dict().items():  # auto stays out of the URL: links stay short
        if value == "auto":
            st.query_params.pop(name, None)
        elif st.query_params.get(name) != value:
            st.query_params[name] = value
    return chosen


def ran_caption(result: object) -> str:
    """What ran, for a page caption: "cpu · float32" or "cuda:0 (NVIDIA H100 80GB HBM3) · bfloat16"."""
    return placement.caption(str(getattr(result, "device_name", getattr(result, "device", "cpu"))),
                             str(getattr(result, "dtype", "float32")))
