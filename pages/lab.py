"""Pretraining lab: train tiny variants side by side on the same token budget and watch them learn, live."""

from __future__ import annotations

import math

import streamlit as st

from app import ui
from app.state import lab
from app.views import device_picker
from app.views import lab as view
from explorer.core.userfiles import MAX_UPLOAD_MB
from explorer.runtime import placement
from explorer.training import recipes, sections
from explorer.training.corpus import Corpus

MAX_PAGE_STEPS = 5_000  # over an hour of tiny steps on 2 CPU cores; longer runs belong to the CLI (no limit)
SEED_MAX = 2**31 - 1
WINDOWS = (32, 64, 128, 256, 512)  # window lengths offered: those that fit this server's memory (cache_lab.limits)
DEFAULT_TOKENS, DEFAULT_WINDOW = 2048, 128
EXITS_HELP = (f"After training: fine-tune a copy on \"{sections.TASK}\" with a classifier after every layer "
              "(self-distilled from the last). Save the run, then measure early exit on the Compression page.")


def _label(name: str) -> str:
    return recipes.RECIPES[name].label


def objectives_input() -> list[str]:
    """The objectives to train, one run each (in the URL)."""
    names = list(recipes.RECIPES)
    default = ui.query_list("objectives", names[:3], names, limit=lab.MAX_RUNS)
    picked = st.multiselect("Objectives (one run each, same token budget)", names, default=default, format_func=_label,
                            key="lab_objectives", max_selections=lab.MAX_RUNS)
    ui.set_query_list("objectives", picked)
    return picked


def budget_input(device: str) -> tuple[str, int, int]:
    """Size, steps and seed (all in the URL), and the time it should take."""
    c1, c2, c3 = st.columns([1, 1, 1])
    sizes = list(recipes.SIZES)
    size = c1.radio("Size", sizes, index=sizes.index(ui.query_choice("size", sizes, "tiny") or "tiny"),
                    horizontal=True, key="lab_size",
                    format_func=lambda s: f"{s} ({recipes.SIZES[s]['num_hidden_layers']} layers × "
                                                          f"{recipes.SIZES[s]['hidden_size']})")
    steps = int(c2.number_input("Steps", 1, MAX_PAGE_STEPS, ui.query_int("steps", 300, 1, MAX_PAGE_STEPS),
                                key="lab_steps"))
    seed = int(c3.number_input("Seed", 0, SEED_MAX, ui.query_int("seed", 0, 0, SEED_MAX), key="lab_seed"))
    st.query_params.update(size=size, steps=str(steps), seed=str(seed))
    per_step, source = lab.pace(size, device)
    eta = f"about {math.ceil(steps * per_step / 60)} min per run at {per_step:.2g} s/step ({source})" if per_step \
        else f"no time estimate: {source}"
    held = lab.slots()
    st.caption(f"{eta}; {held['limit']} trainings run at once on this server, the others wait their turn (at most "
               f"{held['active_limit']} runs queued or running from all visitors; {held['active']} now).")
    if size == "small" and device == "cpu":
        st.info("The small size is meant for a GPU: on this CPU each step takes several times longer than tiny.",
                icon=":material/memory:")
    return size, steps, seed


def _gb(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e8 else f"{n / 1e6:.0f} MB"


def step_input(picked: list[str], size: str, device: str) -> tuple[int, int] | None:
    """Window length and tokens per step (in the URL), their maxima computed from this server's memory for the
    picked objectives; None when not even the shortest window fits (said in a box)."""
    fits = lab.limits(picked, size, max(WINDOWS), device)
    windows = [w for w in WINDOWS if w <= fits["seq_len"]]
    if not windows:
        st.error(f"Not even a {WINDOWS[0]}-token window of these objectives fits the memory one training may use "
                 f"here ({_gb(fits['budget'])}: {fits['why']}). Pick the tiny size or fewer objectives, or try later.",
                 icon=":material/memory:")
        return None
    c1, c2 = st.columns([1, 1])
    wanted = ui.query_int("window", DEFAULT_WINDOW, WINDOWS[0], WINDOWS[-1])
    seq_len = int(c1.select_slider("Window (tokens)", windows,
                                   value=max(w for w in windows if w <= max(wanted, windows[0])),
                                   key="lab_window", help="Tokens per training window; the longest offered is the "
                                                          "longest that fits this server's memory."))
    fits = lab.limits(picked, size, seq_len, device)
    most = max(seq_len, fits["batch_tokens"])
    tokens = int(c2.number_input("Tokens per step", seq_len, most, min(max(ui.query_int("tokens", DEFAULT_TOKENS,
                                 seq_len, most), seq_len), most), step=seq_len, key="lab_tokens",
                                 help="Input tokens per optimizer step, the same for every objective."))
    st.query_params.update(window=str(seq_len), tokens=str(tokens))
    accumulated = (f"; larger steps, up to {fits['batch_tokens']:,} tokens, run as micro-batches whose gradients "
                   "are accumulated" if fits["batch_tokens"] > fits["one_pass"] else "")
    st.caption(f"Memory for each training: {_gb(fits['budget'])} ({fits['why']}): up to {fits['one_pass']:,} tokens "
               f"per step of {seq_len}-token windows fit in one pass{accumulated}.")
    return tokens, seq_len


def text_input() -> tuple[Corpus | None, bool]:
    """The bundled corpus, or the user's file (checked); False when the upload cannot be used."""
    upload = st.file_uploader(f"Your own text (optional: a UTF-8 .txt file of at least a few pages, at most "
                              f"{MAX_UPLOAD_MB} MB)", type=["txt", "md"], key="lab_upload",
                              max_upload_size=MAX_UPLOAD_MB,
                              help=f"At least 2,000 words and at most {MAX_UPLOAD_MB} MB, the server's upload limit.")
    if upload is None:
        st.caption("Training text: the bundled Python 3.11 documentation (about 950,000 words, every 20th document "
                   "held out).")
        return None, True
    with ui.guard():
        text = lab.uploaded_corpus(upload)
        st.caption(ui.markdown_safe(f"Training text: {text.name}, {text.words:,} words "
                                    f"({len(text.heldout)} document(s) held out)."))
        return text, True
    return None, False


choice = device_picker.pick()  # the sidebar's device; training always runs in float32
st.title("Pretraining lab")
st.caption("Train tiny versions of the variants on the same text, tokenizer and tokens per step, and watch each "
           "objective learn: training loss by step, held-out loss by compute (FLOPs) and by time. The corruption "
           "each model trains on is the one the Objectives page draws.")
with ui.guard():
    device = placement.resolve_device(choice.device)
    picked = objectives_input()
    size, steps, seed = budget_input(device)
    step = step_input(picked, size, device)
    text, usable = text_input()
    st.caption(f"Runs on `{device}` in float32 (the precision picker applies to the live pages)."
               + (" Test mode (EXPLORER_LAB_QUICK=1): 256-token steps of 32-token windows." if lab.quick() else ""))
    want_exits = st.checkbox("Also train FastBERT exits", key="lab_exits", help=EXITS_HELP)
    go, clear = st.columns([1, 6])
    if go.button("Train", type="primary", key="lab_train", disabled=not usable or step is None) and step:
        lab.submit(picked, size, steps, seed, device, text, want_exits, batch_tokens=step[0], seq_len=step[1])
    if clear.button("Clear finished runs", key="lab_clear"):
        lab.clear()
polling = any(job.active for job in lab.jobs())
st.session_state["lab_polling"] = polling
st.fragment(view.live, run_every=1.0 if polling else None)()
