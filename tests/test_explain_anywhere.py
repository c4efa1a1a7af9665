"""explorer.explain.anywhere: Why this prediction through one door for a model here or served; a served model's
lens and gradients are refused in the backend's words before any request, and a model here answers exactly as the
library does."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.explain import anywhere, attribution
from explorer.runtime.resolve import resolve
from explorer.serving import backend, localengine
from explorer.serving.endpoints import Endpoint
from tests.tiny_gemma import save_tiny_gemma

TEXT = "The capital of France is"


@pytest.fixture(scope="module")
def here(tmp_path_factory):
    return backend.model(resolve(str(save_tiny_gemma(tmp_path_factory.mktemp("anywhere") / "gemma"))), device="cpu",
                         dtype="float32")


def test_a_model_here_answers_as_the_library_does(here) -> None:
    through = anywhere.attribute_on(here, TEXT, "Paris", "grad-input")
    direct = attribution.run(here.ref, TEXT, "Paris", "grad-input", device="cpu", dtype="float32")
    assert [t.score for t in through.tokens] == [t.score for t in direct.tokens]
    read = anywhere.lens_on(here, TEXT, "Paris")  # its numbers' oracle is test_explain_lens
    assert len(read.layers) == 3 + 1 and read.layers[-1].kl_to_final == pytest.approx(0.0, abs=1e-6)
    assert anywhere.part_tokens(here) == anywhere.LOCAL_PART_TOKENS


def test_a_served_model_is_told_why_before_any_request() -> None:
    down = backend.served(Endpoint("down", f"http://127.0.0.1:{localengine.free_port()}/v1", "m"))
    for ask in (lambda: anywhere.lens_on(down, TEXT, "Paris"),
                lambda: anywhere.attribute_on(down, TEXT, "Paris", "ig")):
        with pytest.raises(ExplorerError, match="insides .* are not available"):
            ask()
    with pytest.raises(ExplorerError, match="connection was refused"):  # occlusion goes to the engine
        anywhere.attribute_on(down, TEXT, "Paris", "occlusion")
    assert anywhere.part_tokens(down) == anywhere.SERVED_PART_TOKENS
