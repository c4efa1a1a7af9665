"""explorer.internals.hooked: hooked runs on a view of a shared model, one at a time per model, the model itself
never hooked: two lens requests on one model at once both answer (one used to refuse with "try again" when the
other's forward fired its hooks), while plain forwards of other requests run beside them untouched."""

from __future__ import annotations

import threading

import torch

from explorer.explain import lens
from explorer.internals import hooked, sites
from explorer.interventions.engine import engine_for
from tests.tiny_gemma import load_tiny_gemma

TEXT = "The capital of France is"


def test_two_lens_requests_at_once_both_answer_beside_plain_forwards(tmp_path) -> None:
    loaded = load_tiny_gemma(tmp_path / "gemma", device="cpu")
    alone = lens.lens(loaded, "next-token", TEXT, "Paris", grid=False)
    answers: list[object] = []
    errors: list[BaseException] = []
    ids = loaded.tokenizer(TEXT, return_tensors="pt")["input_ids"]
    stop = threading.Event()

    def ask() -> None:
        try:
            for _ in range(5):
                answers.append(lens.lens(loaded, "next-token", TEXT, "Paris", grid=False))
        except BaseException as err:  # the test reports it
            errors.append(err)

    def plain() -> None:  # another page's forward on the shared model, at the same moment
        with torch.inference_mode():
            while not stop.is_set():
                loaded.model(input_ids=ids)

    others = [threading.Thread(target=plain) for _ in range(2)]
    askers = [threading.Thread(target=ask) for _ in range(2)]
    for t in [*others, *askers]:
        t.start()
    for t in askers:
        t.join(120)
    stop.set()
    for t in others:
        t.join(60)
    assert not errors, errors
    assert len(answers) == 10 and all(a.layers == alone.layers for a in answers)  # type: ignore[attr-defined]
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in loaded.model.modules())


def test_reading_and_replacing_named_sites_on_the_view(tmp_path) -> None:
    loaded = load_tiny_gemma(tmp_path / "gemma", device="cpu")
    model, found = loaded.model, sites.of(loaded.model)
    ids = loaded.tokenizer(TEXT, return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        own = model(input_ids=ids, output_hidden_states=True)
        points = [hooked.point(found, "embed"), *(hooked.point(found, "resid", i) for i in range(found.layers))]
        got, out = hooked.run(model, lambda view: view(input_ids=ids), read=points)
        assert torch.equal(out.logits, own.logits)
        assert torch.equal(got.value(points[0]), own.hidden_states[0])  # the stream entering the first block
        assert torch.equal(got.value(points[1]), own.hidden_states[1])
        zero = hooked.point(found, "mlp", found.layers - 1)
        _, changed = hooked.run(model, lambda view: view(input_ids=ids), replace={zero: torch.zeros_like})
        assert not torch.equal(changed.logits, own.logits)
        assert torch.equal(model(input_ids=ids).logits, own.logits)  # the shared model itself is unchanged
    assert engine_for(model).lock is hooked.lock_of(model)  # interventions take the same turn
