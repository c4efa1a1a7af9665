"""explorer.architecture.shapes: output shapes from a forward pass on the meta device; what cannot be traced
becomes a note, a bug in our own code does not."""

from __future__ import annotations

import pytest
import torch

from explorer.architecture import analysis, build, catalog, shapes
from tests.reference_configs import meta_model


def test_shapes_on_meta() -> None:
    model, config = meta_model("bert-base-uncased", "pretraining")
    traced, note = shapes.trace_shapes(model, config, 16)
    assert note == "" and traced["bert.encoder.layer.0"] == (1, 16, 768)


def test_shape_tracing_restores_torch_and_covers_the_catalog() -> None:
    missing = [k for k in catalog.keys() if k.startswith(("bart", "t5-small", "bigbird", "xlm", "bert2bert"))
               and analysis.analyse_variant(k, seq_len=8).notes]
    assert missing == []
    assert torch.tensor(3).item() == 3 and bool(torch.tensor(0)) is False
    with pytest.raises(RuntimeError):
        torch.zeros(1, device="meta").item()


def test_a_length_over_the_positions_is_a_note_with_what_to_pick() -> None:
    model, config = meta_model("bert-base-uncased", "base")
    traced, note = shapes.trace_shapes(model, config, 1024)
    assert traced == {} and "512 positions" in note and "pick 512 or fewer" in note


def test_an_architecture_that_cannot_run_on_meta_is_a_note(monkeypatch) -> None:
    model, config = meta_model("bert-base-uncased", "base")

    def unsupported(*args, **kwargs):  # what an op without a meta kernel raises inside the model
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    monkeypatch.setattr(model.encoder, "forward", unsupported)
    traced, note = shapes.trace_shapes(model, config, 16)
    assert traced == {} and note == ("Output shapes unavailable for this architecture on the meta device "
                                     "(NotImplementedError).")


@pytest.mark.parametrize("error", [TypeError, KeyError, AttributeError])
def test_a_bug_in_our_own_hooks_propagates(monkeypatch, error: type[Exception]) -> None:
    model, config = meta_model("bert-base-uncased", "base")

    def broken(out):
        raise error("a bug, not an architecture the meta device cannot run")

    monkeypatch.setattr(shapes, "_first_tensor", broken)
    with pytest.raises(error, match="a bug"):
        shapes.trace_shapes(model, config, 16)
    assert torch.tensor(3).item() == 3  # .item() restored on the way out


def test_an_attribute_error_inside_the_forward_is_not_hidden(monkeypatch) -> None:
    model, config = meta_model("bert-base-uncased", "base")

    def broken(*args, **kwargs):
        raise AttributeError("'NoneType' object has no attribute 'shape'")

    monkeypatch.setattr(model.encoder, "forward", broken)
    with pytest.raises(AttributeError):
        shapes.trace_shapes(model, config, 16)


def test_dummy_inputs_feed_the_decoder_of_an_encoder_decoder() -> None:
    model, config = meta_model("t5-small")
    assert set(shapes.dummy_inputs(model, config, 8)) == {"input_ids", "decoder_input_ids"}
    model = build.instantiate(build.config_from_dict({"model_type": "bert"}), "base")
    assert set(shapes.dummy_inputs(model, model.config, 8)) == {"input_ids"}
