"""explorer.explain.methods: one record per attribution method drives the run, the cost, the plots, the page and
the CLI; SmoothGrad (one file) is gradient x input at zero noise and the same scores for the same question."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.cli import build_parser
from explorer.core.errors import ExplorerError
from explorer.explain import attribution, cost, framer
from explorer.explain.methods import METHODS, Work, method_of, smoothgrad
from explorer.plots.explain import token_strip
from tests.tiny_gemma import load_tiny_gemma

TEXT = "The capital of France is"


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    return load_tiny_gemma(tmp_path_factory.mktemp("explain-methods") / "gemma", device="cpu")


def test_every_method_is_found_once_and_says_what_it_needs() -> None:
    assert list(METHODS) == ["grad", "grad-input", "ig", "smoothgrad", "occlusion"]
    assert [m.name for m in METHODS.values() if m.served] == [m.name for m in METHODS.values() if m.anytime] == \
        ["occlusion"]  # served and in parts: forwards only
    assert [m.name for m in METHODS.values() if m.stepped] == ["ig"]
    assert all(m.backward != m.served for m in METHODS.values())
    assert attribution.METHOD_NAMES["smoothgrad"].startswith("SmoothGrad")
    with pytest.raises(ExplorerError, match="use one of grad, grad-input, ig, smoothgrad, occlusion"):
        method_of("<b>saliency</b>")


def test_the_cli_offers_every_method() -> None:
    args = build_parser("attribute").parse_args(["attribute", "--text", "a b", "--target", "c", "--method",
                                                 "smoothgrad"])
    assert args.method == "smoothgrad"


def test_smoothgrad_without_noise_is_gradient_x_input(gemma) -> None:
    frame = framer.build(gemma, "next-token", TEXT, "Paris")
    plan = cost.estimate(gemma.model, frame, "smoothgrad", 0, "cpu")
    quiet = smoothgrad.smoothed(Work(gemma, frame, 0, plan), samples=4, noise=0.0)
    plain = attribution.attribute(gemma, "next-token", TEXT, "Paris", "grad-input")
    assert np.allclose(quiet, [t.score for t in plain.tokens], atol=1e-5)


def test_smoothgrad_is_the_same_for_the_same_question_and_differs_from_one_gradient(gemma) -> None:
    one = attribution.attribute(gemma, "next-token", TEXT, "Paris", "smoothgrad")
    again = attribution.attribute(gemma, "next-token", TEXT, "Paris", "smoothgrad")
    plain = attribution.attribute(gemma, "next-token", TEXT, "Paris", "grad-input")
    assert [t.score for t in one.tokens] == [t.score for t in again.tokens]
    assert not np.allclose([t.score for t in one.tokens], [t.score for t in plain.tokens], atol=1e-6)
    assert one.output == pytest.approx(plain.output, abs=1e-5)
    assert one.cost is not None and one.cost.passes == 3.0 * smoothgrad.SAMPLES + 1
    assert one.completeness is None and one.steps is None
    assert token_strip(one).data[0].colorscale != token_strip(attribution.attribute(
        gemma, "next-token", TEXT, "Paris", "grad")).data[0].colorscale  # signed against unsigned


def test_integrated_gradients_steps_are_refused_only_where_they_mean_something() -> None:
    assert attribution.check_steps("smoothgrad", 10_000) is None
    with pytest.raises(ExplorerError, match="from 1 to 512"):
        attribution.check_steps("ig", 10_000)
