"""The NDIF path without a network: its refusals and messages (no key, NDIF unreachable, a bad model id), and the
very trace it would ship run through nnsight's local simulation of the server, equal to the local grid. Nothing
here pretends that NDIF answered: no NDIF server is reachable from this machine."""

from __future__ import annotations

import itertools
import math
import warnings

import pytest

from explorer.core.errors import ExplorerError
from explorer.interventions import patching, remote
from tests.tiny_gemma import load_tiny_gemma

CLEAN, CORRUPT = "The Eiffel Tower is in the city of ___.", "The Colosseum is in the city of ___."
CLOSED = "http://127.0.0.1:9"  # nothing listens on the discard port: connection refused at once


def test_no_key_is_refused_and_says_it_was_not_verified(monkeypatch) -> None:
    from nnsight import CONFIG

    monkeypatch.setattr(CONFIG.API, "APIKEY", None)
    with pytest.raises(ExplorerError, match="needs an NDIF API key") as err:
        remote.remote_patch("google/gemma-3-270m", CLEAN, CORRUPT, "Paris", "Rome", host=CLOSED)
    assert remote.NOT_VERIFIED in str(err.value)


def test_an_unreachable_ndif_is_said_in_words() -> None:
    with pytest.raises(ExplorerError, match="Could not reach NDIF at http://127.0.0.1:9") as err:
        remote.remote_patch("google/gemma-3-270m", CLEAN, CORRUPT, "Paris", "Rome", key="k", host=CLOSED)
    assert "not verified on this machine" in str(err.value)


@pytest.mark.parametrize("repo", ["../etc/passwd", "gemma", "<b>x</b>/y"])
def test_a_model_id_must_be_a_hub_id(repo: str) -> None:
    with pytest.raises(ExplorerError, match="not a Hugging Face model id"):
        remote.remote_patch(repo, CLEAN, CORRUPT, "Paris", "Rome", key="k", host=CLOSED)


def test_the_shipped_trace_equals_the_local_grid(tmp_path) -> None:
    """nnsight's remote='local' backend serializes the request as for NDIF and runs it with our modules hidden."""
    directory = tmp_path / "gemma"
    loaded = load_tiny_gemma(directory, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shipped = remote.remote_patch(str(directory), CLEAN, CORRUPT, "Paris", "Rome", simulate=True)
    local = patching.patch_loaded(loaded, CLEAN, CORRUPT, "Paris", "Rome")
    assert shipped.clean_tokens == local.clean_tokens and shipped.target == local.target
    assert math.isclose(shipped.clean_metric, local.clean_metric, abs_tol=1e-5)
    for a, b in zip(itertools.chain(*shipped.values), itertools.chain(*local.values), strict=True):
        assert math.isclose(a, b, abs_tol=1e-5)
    assert "simulation" in shipped.notices[0].text
