"""Remote internals: the residual-stream patching grid of a model NDIF hosts, traced on NDIF's servers through
nnsight (``remote=True``), for users with an NDIF API key.

The model never comes here: nnsight builds its skeleton from the Hub's config (no weights) and ships the trace's
code to NDIF, which runs it on its copy and sends back the saved values. The trace body below is self-contained
(plain tensors, ints and the model's envoys: nothing from this package runs on the server). Before anything is
shipped, the key is checked, NDIF's status is asked (:func:`deployed`) and the model must be running there; each
failure is one message. The API key goes to this request's backend only, never into nnsight's process-wide config
(another session must not inherit a visitor's key).

**Not verified on this machine**: it has no internet, so no NDIF server ever answered this code here
(:data:`NOT_VERIFIED`, said by the page and the CLI). What did run here is the same trace through nnsight's
``remote="local"`` backend, which serializes the request exactly as for NDIF, deserializes it with this project's
modules hidden (as on the server) and runs it on a local model (tests/test_interventions_remote.py).
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

import httpx
import torch

from explorer.core.errors import ExplorerError, shorten
from explorer.core.notices import Notice
from explorer.interventions import metrics, stacks
from explorer.interventions.grid import PatchGrid
from explorer.interventions.pair import Pair, make_pair

if TYPE_CHECKING:  # typing only: nnsight loads when a remote request is made
    from nnsight import TransformersModel
    from nnsight.tracing.backend import Backend

__all__ = ["NOT_VERIFIED", "api_key", "deployed", "remote_patch", "trace_grid"]

NOT_VERIFIED = ("Remote tracing through NDIF was not verified on this machine (it has no internet): the request is "
                "built and serialized as nnsight sends it, and the same trace ran here through nnsight's local "
                "simulation of the server, but no NDIF server has answered it from here.")
STATUS_TIMEOUT = (5.0, 20.0)  # connect, read: seconds to wait for NDIF's status before saying it is unreachable
_REPO = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}")


def api_key(given: str | None) -> str:
    """The NDIF API key: the one typed, else nnsight's own setting (``NDIF_API_KEY``); none is a message."""
    from nnsight import CONFIG

    key = (given or "").strip() or (CONFIG.API.APIKEY or "").strip()
    if not key:
        raise ExplorerError("Remote tracing needs an NDIF API key: get one at https://login.ndif.us, then type it "
                            f"or set NDIF_API_KEY. {NOT_VERIFIED}")
    return key


def check_repo(repo: str) -> str:
    name = (repo or "").strip()
    if not _REPO.fullmatch(name):
        raise ExplorerError(f"{shorten(name)!r} is not a Hugging Face model id (owner/name, e.g. "
                            "meta-llama/Llama-3.1-8B): NDIF hosts models by their Hub id.")
    return name


def deployed(repo: str, host: str) -> None:
    """Return when NDIF at ``host`` says ``repo`` is running; else an ExplorerError saying what it said, or that it
    could not be reached (always the case on a machine without internet)."""
    try:
        response = httpx.get(f"{host.rstrip('/')}/status", timeout=httpx.Timeout(STATUS_TIMEOUT[0],
                                                                                  read=STATUS_TIMEOUT[1]))
        response.raise_for_status()
        status = response.json()
    except (httpx.HTTPError, ValueError) as err:
        raise ExplorerError(f"Could not reach NDIF at {shorten(host)} ({type(err).__name__}): remote tracing needs "
                            f"the internet. {NOT_VERIFIED}") from err
    running = [d.get("repo_id") for d in (status.get("deployments") or {}).values()
               if isinstance(d, dict) and d.get("application_state") == "RUNNING"]
    if repo not in running:
        shown = ", ".join(sorted(str(r) for r in running)[:8]) or "none right now"
        raise ExplorerError(f"NDIF does not run {repo} at the moment; it runs: {shown}.")


def trace_grid(model: TransformersModel, paths: list[str], pair: Pair, backend: Backend,
               ) -> tuple[float, float, list[list[float]]]:
    """(clean logit difference, corrupted one, layers x positions of patched ones) from one nnsight session of
    ``model`` (a TransformersModel) run by ``backend``: one trace per layer, a row per position."""
    import nnsight

    clean = torch.tensor([pair.clean.ids])
    corrupt = torch.tensor([pair.corrupt.ids])
    length, target, foil = len(pair.clean.ids), pair.target_id, int(pair.foil_id or 0)
    with model.session(backend=backend):
        with model.trace(clean):
            saved = [(o[0] if isinstance(o, tuple) else o).clone() for o in (model.get(p).output for p in paths)]
            ends = nnsight.save([float(model.output.logits[0, -1, target] - model.output.logits[0, -1, foil])])
        with model.trace(corrupt):
            ends.append(float(model.output.logits[0, -1, target] - model.output.logits[0, -1, foil]))
        rows = nnsight.save([])
        for layer in range(len(paths)):
            with model.trace(corrupt.expand(length, -1)):
                hidden = model.get(paths[layer]).output
                hidden = hidden[0] if isinstance(hidden, tuple) else hidden
                for position in range(length):
                    hidden[position, position] = saved[layer][0, position]
                last = model.output.logits[:, -1]
                rows.append((last[:, target] - last[:, foil]).tolist())
    return ends[0], ends[1], rows


def _backend(model: TransformersModel, key: str, host: str, simulate: bool) -> Backend:
    if simulate:  # nnsight's dry run of the remote path: serialized, modules hidden, run here
        from nnsight.intervention.backends.local import LocalSimulationBackend

        return LocalSimulationBackend(model)
    from nnsight.intervention.backends.remote import RemoteBackend

    return RemoteBackend(model.to_model_key(), host=host, api_key=key)


def _model(repo: str, simulate: bool) -> TransformersModel:
    """nnsight's wrapper of ``repo``: a weightless skeleton for NDIF; loaded here for the simulation."""
    from nnsight import TransformersModel

    try:
        return TransformersModel(repo, task="text-generation", dispatch=simulate)
    except (OSError, ValueError) as err:
        raise ExplorerError(f"Could not read {repo}'s configuration from the Hugging Face Hub ({type(err).__name__}): "
                            "nnsight builds the model's skeleton from it; allow the Hub (HF_HUB_OFFLINE=0) and the "
                            f"internet. {NOT_VERIFIED}") from err


def remote_patch(repo: str, clean: object, corrupt: object, target: object, foil: object, *,
                 key: str | None = None, host: str | None = None, simulate: bool = False) -> PatchGrid:
    """The residual-stream grid (logit difference) of ``repo`` traced on NDIF. ``simulate``: ``repo`` is a local
    directory and nnsight's local simulation of the server runs the request (no key, no network)."""
    from nnsight import CONFIG

    started = time.perf_counter()
    metrics.check_metric("logit-diff", foil)
    where = (host or CONFIG.API.HOST).strip()
    token = "" if simulate else api_key(key)
    name = repo if simulate else check_repo(repo)
    if not simulate:
        deployed(name, where)
    model = _model(name, simulate)
    s, _ = stacks.stack_sites(model._module)
    if s.family != "decoder":
        raise ExplorerError(f"{name} is not a decoder: remote patching reads a decoder's next token.")
    pair = make_pair(model.tokenizer, model._module.config, "decoder", "decoder", clean, corrupt, target, foil)
    clean_value, corrupt_value, rows = trace_grid(model, [s.block(i) for i in range(s.layers)], pair,
                                                  _backend(model, token, where, simulate))
    notice = Notice("info", "Traced by nnsight's local simulation of NDIF." if simulate else NOT_VERIFIED)
    where_ran = ("cpu", "cpu") if simulate else ("ndif", f"NDIF ({where})")
    return PatchGrid(name, "decoder", "decoder", "resid", "logit-diff", pair.tokens, pair.corrupt_tokens, pair.tokens,
                     pair.target, pair.foil, clean_value, corrupt_value, tuple(tuple(r) for r in rows),
                     tuple(stacks.relative_depth(s.layers)), pair.first_difference, None, (notice,),
                     seconds=time.perf_counter() - started, device=where_ran[0],
                     device_name=where_ran[1])
